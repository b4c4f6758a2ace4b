import { Command } from 'commander';
import { ExitCode } from '../errors.js';
import type { Diagnosis, DiagnoseInput } from '../system/probes/diagnose.js';
import { CAPABILITY_NAMES } from '../system/probes/capability-text.js';
import type { RawDoctorOptions } from './doctor-action.js';
import { collect, withExitCodes, type CommandFactory, type ExitCodeList } from './program.js';

/** The exit codes `doctor` can return, in its --help and docs/cli.md. */
const DOCTOR_EXIT_CODES: ExitCodeList = [
  { code: ExitCode.Ok, meaning: 'success: the table is printed, whatever is missing (unless --require names it)' },
  ExitCode.Usage,
  { code: ExitCode.BadValue, meaning: '--require names a capability doctor does not check' },
  ExitCode.Internal,
  {
    code: ExitCode.MissingCapability,
    meaning: 'a capability named in --require is missing here (stderr names it; its fix is in the table)',
  },
];

/** doctor with the machine probed by `diagnoseMachine`: a fake in tests; the real probes when none is given. */
export function doctorCommandWith(diagnoseMachine?: (input: DiagnoseInput) => Promise<Diagnosis>): CommandFactory {
  return (io, result) => {
    const command = new Command('doctor')
      .description('show what this machine allows the profiler to do, and what each missing piece costs')
      .option('--json', 'print what was found as JSON (docs/json-output.md)')
      .option(
        '--data <dir>',
        'also name the file system of a dataset folder and what it lets the cache modes prove (repeatable)',
        collect,
      )
      .option(
        '--python <path>',
        "the job's interpreter, as profile --python names it: doctor says whether it is found (default: python3 " +
          'on PATH)',
      )
      .option(
        '--require <list>',
        `exit with code ${ExitCode.MissingCapability} when any of these capabilities is missing, e.g. storage-throttle,python-torch (a CI pre-flight check); any of ${CAPABILITY_NAMES.join(', ')}`,
      )
      .addHelpText(
        'after',
        `
Examples:
  $ ds-analyzer doctor
  $ sudo ds-analyzer doctor --json
  $ sudo ds-analyzer doctor --python ~/venv/bin/python   (the venv a job under sudo should keep)
  $ ds-analyzer doctor --data /mnt/imagenet
  $ ds-analyzer doctor --require python-torch,residency      (in CI, before profiling)`,
      )
      .action(async (options: RawDoctorOptions) => {
        // Loaded when doctor runs: its checks and renderer stay out of every other command's start-up.
        const { doctorAction } = await import('./doctor-action.js');
        result.exitCode = await doctorAction(options, io, diagnoseMachine);
      });
    return withExitCodes(command, DOCTOR_EXIT_CODES);
  };
}

export const doctorCommand: CommandFactory = doctorCommandWith();
