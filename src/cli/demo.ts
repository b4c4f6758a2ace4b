import { Command } from 'commander';
import { ExitCode } from '../errors.js';
import { EMULATOR_PRESETS } from '../emulator/presets.js';
import { formatBytes } from '../units.js';
import type { RawDemoOptions } from './demo-action.js';
import { withExitCodes, type CommandFactory, type ExitCodeList } from './program.js';

/** The exit codes `demo` can return, in its --help and docs/cli.md. */
const DEMO_EXIT_CODES: ExitCodeList = [
  ExitCode.Ok,
  ExitCode.Usage,
  ExitCode.JobFailed,
  ExitCode.Environment,
  ExitCode.Internal,
  ExitCode.Interrupted,
];

export const demoCommand: CommandFactory = (io, result) => {
  const command = new Command('demo')
    .description('profile a built-in emulated training job on a generated dataset: no GPU, no Python needed')
    .option('--quick', 'a smaller dataset and faster job, measured to 5% as profile is (about half a minute)')
    .option('--dataset-dir <dir>', 'where the generated dataset lives (reused between runs)')
    .option('--profiles-dir <dir>', 'folder for the profile', 'profiles')
    .option('--reports-dir <dir>', 'folder for the HTML and Markdown report', 'reports')
    .option('--no-report', 'do not write the report')
    .option('--no-throttle', 'do not throttle storage even where permitted')
    .option(
      '--remote',
      'serve the dataset from an object store on loopback and profile it as remote data, capped at the metering ' +
        'proxy (no root needed); runs the --quick workload, as the proxy handles every byte',
    )
    .option('--json', 'print only the profile JSON on stdout')
    .addHelpText(
      'after',
      `
The demo generates a dataset of real compressed files (${formatBytes(EMULATOR_PRESETS.full.files * EMULATOR_PRESETS.full.fileBytes)}, cached
between runs), then profiles an emulated job that reads them in worker threads,
decompresses and pre-processes them on the CPU, and sleeps a set compute time
per batch as an accelerator would. Where the machine permits (root, cgroup
blkio/io), cold storage is throttled so the fetch stall shows, and the cold
mode runs once more with part of the dataset cached (profile --overlap). Then
it asks the what-if model what would remove the stall if the page cache could
not hold the dataset, and writes the HTML and Markdown report.

Examples:
  $ ds-analyzer demo
  $ ds-analyzer demo --quick --json > demo-profile.json
  $ ds-analyzer demo --remote       (the same job fetching over HTTP through the metering proxy)`,
    )
    .action(async (raw: RawDemoOptions) => {
      // Loaded when the demo runs: the run, the emulator and the report stay out of every other command's start-up.
      const { demoAction } = await import('./demo-action.js');
      result.exitCode = await demoAction(raw, io);
    });
  return withExitCodes(command, DEMO_EXIT_CODES);
};
