import { Command } from 'commander';
import { ExitCode } from '../errors.js';
import type { RawExportOptions } from './export-action.js';
import { withExitCodes, type CommandFactory, type ExitCodeList } from './program.js';

/** The exit codes `export` can return, in its --help and docs/cli.md. */
const EXPORT_EXIT_CODES: ExitCodeList = [
  ExitCode.Ok,
  { code: ExitCode.Usage, meaning: 'usage error, or the output exists (pass --force, or --out elsewhere)' },
  { code: ExitCode.BadValue, meaning: 'an unknown --format' },
  { code: ExitCode.MissingInput, meaning: 'the profile does not exist' },
  { code: ExitCode.CorruptFile, meaning: 'the profile is corrupt (not JSON, wrong schemaVersion, malformed)' },
  { code: ExitCode.Environment, meaning: 'the output cannot be written (permissions, a full disk)' },
  ExitCode.Internal,
];

export const exportCommand: CommandFactory = (io, result) => {
  const command = new Command('export')
    .description("write a profile's per-iteration results as CSV, a Chrome/Perfetto trace or TensorBoard scalars")
    .argument('<profile>', 'profile file')
    .requiredOption('--format <format>', 'csv, chrome-trace or tensorboard')
    .option(
      '--out <path>',
      'file to write (a folder for tensorboard) (default: beside the profile: NAME.csv, NAME.trace.json, ' +
        'NAME-tensorboard/)',
    )
    .option('--force', 'replace an existing output (without it, export refuses to; tensorboard: a non-empty log dir)')
    .addHelpText(
      'after',
      `
csv: one row per iteration of every mode, rank and run (mode, variant, run,
rank, node, iteration, epoch, start_s, end_s, duration_s, wait_s, compute_s,
samples, bytes, warmup, epoch_start, checkpoint columns; docs/export.md);
pandas.read_csv(path) loads it. ds_analyzer.load(profile) gives the same rows
in Python.
chrome-trace: open in https://ui.perfetto.dev or chrome://tracing: a process
per mode, a thread per rank, each iteration with its data wait and step,
checkpoint saves and epoch starts; ts is wall-clock microseconds since the
Unix epoch ("baseTimeNanoseconds": 0), the clock of a PyTorch Profiler trace.
tensorboard: a log dir with a run per mode (and rank): iteration time, data
wait and samples/s per iteration, the mode's summary, and the split.

Examples:
  $ ds-analyzer export profiles/train-20250101T120000.json --format csv
  $ ds-analyzer export profiles/train-20250101T120000.json --format chrome-trace --out train.trace.json
  $ ds-analyzer export profiles/train-20250101T120000.json --format tensorboard --out runs/dsa && tensorboard --logdir runs/dsa`,
    )
    .action(async (profileArg: string, raw: RawExportOptions) => {
      const { exportAction } = await import('./export-action.js');
      result.exitCode = exportAction(profileArg, raw, io);
    });
  return withExitCodes(command, EXPORT_EXIT_CODES);
};
