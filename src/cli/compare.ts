import { Command } from 'commander';
import { ExitCode } from '../errors.js';
import { withExitCodes, type CommandFactory, type ExitCodeList } from './program.js';

/** The exit codes `compare` can return, in its --help and docs/cli.md. */
const COMPARE_EXIT_CODES: ExitCodeList = [
  { code: ExitCode.Ok, meaning: 'success, whatever changed (gate --baseline fails on a regression)' },
  ExitCode.Usage,
  { code: ExitCode.MissingInput, meaning: 'a profile does not exist' },
  { code: ExitCode.CorruptFile, meaning: 'a profile is corrupt (not JSON, wrong schemaVersion, malformed)' },
  ExitCode.Internal,
];

export const compareCommand: CommandFactory = (io, result) => {
  const command = new Command('compare')
    .description(
      'show two profiles side by side: each figure, its change, and whether the change is beyond the noise of both',
    )
    .argument('<a>', 'profile A (before)')
    .argument('<b>', 'profile B (after)')
    .option('--json', 'print the comparison as JSON on stdout')
    .addHelpText(
      'after',
      `
A change is "beyond noise" when the 95% interval of the difference (root sum
of squares of both profiles' half-widths) excludes zero. compare reports; it
does not fail on a change (use 'ds-analyzer gate --baseline' for that).

Examples:
  $ ds-analyzer compare profiles/before.json profiles/after.json
  $ ds-analyzer compare baseline.json profiles/train-20250101T120000.json --json`,
    )
    .action(async (pathA: string, pathB: string, raw: { json?: boolean }) => {
      // Loaded when compare runs: the comparison, zod and the renderer stay out of every other command's start-up.
      const { compareAction } = await import('./compare-action.js');
      result.exitCode = compareAction(pathA, pathB, raw, io);
    });
  return withExitCodes(command, COMPARE_EXIT_CODES);
};
