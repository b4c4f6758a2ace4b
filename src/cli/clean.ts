import { Command } from 'commander';
import { ExitCode } from '../errors.js';
import type { CleanMachine, RawCleanOptions } from './clean-action.js';
import { withExitCodes, type CommandFactory, type ExitCodeList } from './program.js';

/** The exit codes `clean` can return, in its --help and docs/cli.md. */
const CLEAN_EXIT_CODES: ExitCodeList = [
  {
    code: ExitCode.Ok,
    meaning: 'success: everything found was removed, restored, or listed as kept (each line says which)',
  },
  ExitCode.Usage,
  {
    code: ExitCode.Environment,
    meaning: 'something could not be removed or restored (its line names it and the fix; often: run as root)',
  },
  ExitCode.Internal,
];

/** clean on `machine`: a fake in tests; this machine's cgroups when none is given. */
export function cleanCommandWith(machine?: CleanMachine): CommandFactory {
  return (io, result) => {
    const command = new Command('clean')
      .description(
        'remove what ds-analyzer left behind and restore what it changed on this machine (cgroups of killed ' +
          'runs, a DAMON reclaim pause), and list or remove its files',
      )
      .option('--dry-run', 'say what would be done, change nothing')
      .option(
        '--force',
        'kill the processes of a killed run still inside its ds-analyzer-* cgroup, then remove the group ' +
          '(default: keep it and name them)',
      )
      .option(
        '--cache',
        "remove the demo's datasets under ~/.cache/ds-analyzer and the copies of remote data killed profiles left " +
          '(default: list them with their size)',
      )
      .option(
        '--artifacts',
        "remove the profiles' artefact folders (<profile>.d: the job's logs and events) and validate's work " +
          'folders (reports/validate-*); the profiles themselves are kept (default: list them with their size)',
      )
      .option('--profiles-dir <dir>', 'folder of the profiles whose artefact folders are listed', 'profiles')
      .option('--reports-dir <dir>', "folder of validate's work folders", 'reports')
      .addHelpText(
        'after',
        `
Examples:
  $ sudo ds-analyzer clean --dry-run        # what a killed run left on the machine, and the files
  $ sudo ds-analyzer clean                  # restore the machine; list the files, remove none
  $ ds-analyzer clean --cache --artifacts   # also remove the demo's datasets and the artefact folders

What each run changes and leaves behind: docs/side-effects.md.`,
      )
      .action(async (raw: RawCleanOptions) => {
        // Loaded when clean runs: its cgroup and file work stays out of every other command's start-up.
        const { cleanAction } = await import('./clean-action.js');
        result.exitCode = await cleanAction(raw, io, machine);
      });
    return withExitCodes(command, CLEAN_EXIT_CODES);
  };
}

export const cleanCommand: CommandFactory = cleanCommandWith();
