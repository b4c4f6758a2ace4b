import { Command } from 'commander';
import { ExitCode } from '../errors.js';
import type { RawReportOptions } from './report-action.js';
import { withExitCodes, type CommandFactory, type ExitCodeList } from './program.js';

/** The exit codes `report` can return, in its --help and docs/cli.md. */
const REPORT_EXIT_CODES: ExitCodeList = [
  ExitCode.Ok,
  ExitCode.Usage,
  { code: ExitCode.MissingInput, meaning: 'the profile does not exist, or --profiles-dir holds none' },
  { code: ExitCode.CorruptFile, meaning: 'the profile is corrupt (not JSON, wrong schemaVersion, malformed)' },
  { code: ExitCode.Environment, meaning: 'the report files cannot be written (a full disk)' },
  ExitCode.Internal,
];

export const reportCommand: CommandFactory = (io, result) => {
  const command = new Command('report')
    .description('write a self-contained HTML report and a Markdown report with PNG charts for a profile')
    .argument('[profile]', 'profile file (default: the newest in --profiles-dir)')
    .option('--out-dir <dir>', 'folder for the report files', 'reports')
    .option('--profiles-dir <dir>', 'folder searched for the newest profile', 'profiles')
    .option(
      '--redact',
      'keep host names, absolute paths and command-line secrets out of the report, as profile --redact does ' +
        '(docs/side-effects.md)',
    )
    .addHelpText(
      'after',
      `
Writes OUT_DIR/<profile>.html (opens offline: Chart.js and the data are inside
the file), OUT_DIR/<profile>.md and OUT_DIR/<profile>-<chart>.png: the split
per mode, per-iteration times with the warm-up marked, CPU / disk read / page
cache timelines, and what-if curves (throughput against cache size and CPUs).

Examples:
  $ ds-analyzer report
  $ ds-analyzer report profiles/train-20250101T120000.json --out-dir ci-reports`,
    )
    .action(async (profileArg: string | undefined, raw: RawReportOptions) => {
      // Loaded when report runs: the renderers, Chart.js and the canvas stay out of every other command's start-up.
      const { reportAction } = await import('./report-action.js');
      result.exitCode = await reportAction(profileArg, raw, io);
    });
  return withExitCodes(command, REPORT_EXIT_CODES);
};
