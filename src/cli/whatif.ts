import { Command } from 'commander';
import { ExitCode } from '../errors.js';
import { KNOBS } from '../whatif/knobs/index.js';
import type { KnobFlag } from '../whatif/knobs/knob.js';
import { PIPELINE_KNOBS } from '../whatif/knobs/pipeline.js';
import type { RawWhatifOptions } from './whatif-action.js';
import { withExitCodes, type CommandFactory, type ExitCodeList } from './program.js';

/** The exit codes `whatif` can return, in its --help and docs/cli.md. */
const WHATIF_EXIT_CODES: ExitCodeList = [
  ExitCode.Ok,
  ExitCode.Usage,
  ExitCode.BadValue,
  {
    code: ExitCode.MissingInput,
    meaning:
      'the profile does not exist, or it lacks a mode or measurement the question needs (the message names the ' +
      'field and how to measure it)',
  },
  { code: ExitCode.CorruptFile, meaning: 'the profile is corrupt (not JSON, wrong schemaVersion, malformed)' },
  ExitCode.Internal,
];

export const whatifCommand: CommandFactory = (io, result) => {
  const command = new Command('whatif')
    .description(
      'predict throughput, epoch time and stalls with another cache size, CPU count, storage bandwidth or ' +
        'accelerator, from a profile',
    )
    .argument('[profile]', 'profile file (default: the newest in --profiles-dir)');
  // The machine and job to predict for: one flag per what-if knob (src/whatif/knobs/).
  const addKnobs = (knobs: readonly { flag: KnobFlag }[]) => {
    for (const { flag } of knobs) command.option(flag.syntax, flag.help, flag.defaultValue);
  };
  addKnobs(KNOBS);
  matrixOptions(command);
  addKnobs(PIPELINE_KNOBS);
  command
    .option('--profiles-dir <dir>', 'folder searched for the newest profile', 'profiles')
    .option('--json', 'print only the result JSON on stdout')
    .addHelpText('after', WHATIF_HELP)
    .action(async (profileArg: string | undefined, raw: RawWhatifOptions) => {
      // Loaded when whatif runs: the model, zod and the renderers stay out of every other command's start-up.
      const { whatifAction } = await import('./whatif-action.js');
      result.exitCode = await whatifAction(profileArg, raw, io);
    });
  return withExitCodes(command, WHATIF_EXIT_CODES);
};

/** Synergy's grid: predicted throughput at each CPU count and cache size. */
function matrixOptions(command: Command): Command {
  return command
    .option(
      '--matrix',
      "print Synergy's table instead: predicted throughput at each CPU count and cache size of a grid, the other " +
        'settings as given (versioned JSON with --json, for a scheduler)',
    )
    .option(
      '--matrix-cpus <list>',
      'with --matrix: the CPU counts of the grid (default: 1, 2, 4, ... past twice the profiled count)',
    )
    .option(
      '--matrix-cache <list>',
      'with --matrix: the cache sizes of the grid, bytes or shares of the dataset (default: 0,25%,50%,75%,100%)',
    );
}

const WHATIF_HELP = `
Examples:
  $ ds-analyzer whatif                                   # newest profile, as profiled, with sweeps and recommendations
  $ ds-analyzer whatif profiles/resnet-20250101T120000.json --cache 64G --cpus 16
  $ ds-analyzer whatif --workers 8                       # num_workers=8 on the profiled CPUs
  $ ds-analyzer whatif --cache 50%                       # half the dataset cached
  $ ds-analyzer whatif --cache 0                         # no cache: every read from storage
  $ ds-analyzer whatif --storage-bw 200MB/s --cache-policy minio --cache 512GiB
  $ ds-analyzer whatif --gpus 8 --gpu-speedup 2 --epochs 90 --json > whatif.json
  $ ds-analyzer whatif --nodes 4 --cache 64G --cache-policy partitioned --peer-bw 1.2GB/s   # CoorDL's cache over 4 nodes
  $ ds-analyzer whatif --jobs 4 --gpus 1               # 4 one-GPU jobs on one dataset: independent against coordinated prep
  $ ds-analyzer whatif --matrix --matrix-cpus 2,4,8,16 --matrix-cache 0,32G,64G --json > matrix.json
  $ ds-analyzer whatif --checkpoint-every 500 --write-bw 200MB/s    # saves every 500 iterations to slower storage
  $ ds-analyzer whatif --async-save --failures-per-day 2           # background saves; the work two failures a day lose
  $ ds-analyzer whatif --persistent-workers                        # workers kept across epochs: the epoch-boundary stall left

The model, in words (its formula and fit: docs/whatif.md): with loader
workers, an iteration takes as long as the slowest of three things: the
accelerator's step, the CPUs pre-processing a batch, and the storage reading
the bytes the cache misses (reads and pre-processing overlap as far as the
cold mode showed); with --workers 0 the three add up. Each figure comes from
the profile's modes and is listed with the measurement it comes from.
Predictions are for epoch 2 on unless --epochs is given; the first epoch is
always cold. A profile that lacks a mode the model needs exits with code 4.`;
