import { Command } from 'commander';
import { ExitCode } from '../errors.js';
import { VALIDATE_FLAG_DEFAULTS as DEFAULTS } from '../profile/run-defaults.js';
import type { RawValidateOptions } from './validate-action.js';
import { withExitCodes, type CommandFactory, type ExitCodeList } from './program.js';

/** The exit codes `validate` can return, in its --help and docs/cli.md. */
const VALIDATE_EXIT_CODES: ExitCodeList = [
  ExitCode.Ok,
  ExitCode.Usage,
  ExitCode.BadValue,
  {
    code: ExitCode.MissingInput,
    meaning:
      'the profile or its dataset does not exist, or the profile lacks a mode the what-if model needs or holds a block that stalled',
  },
  {
    code: ExitCode.JobFailed,
    meaning: 'the training job failed at a point (the points measured are in the report folder)',
  },
  ExitCode.CommandNotFound,
  { code: ExitCode.CorruptFile, meaning: 'the profile is corrupt, or the job wrote no valid event' },
  {
    code: ExitCode.Environment,
    meaning: 'the environment cannot run a point asked for (no throttle, no proxy for --latency, a full disk)',
  },
  ExitCode.Internal,
  {
    code: ExitCode.Interrupted,
    meaning:
      'interrupted: Ctrl-C stops the running point (its job and their children) or download (the points measured are in the report folder)',
  },
];

export const validateCommand: CommandFactory = (io, result) => {
  const command = new Command('validate')
    .description(
      'run the profiled job again at other cache sizes and CPU counts and compare what it does with what whatif ' +
        'predicted',
    )
    .argument('[profile]', 'profile to validate (default: the newest in profiles/)');
  runOptions(pointOptions(command))
    .addHelpText('after', VALIDATE_HELP)
    .action(async (file: string | undefined, raw: RawValidateOptions) => {
      // Loaded when validate runs: its runs, the model and the renderers stay out of every other command's start-up.
      const { validateAction } = await import('./validate-action.js');
      result.exitCode = await validateAction(file, raw, io);
    });
  return withExitCodes(command, VALIDATE_EXIT_CODES);
};

/** The points to run at: one flag for each thing a point changes. */
function pointOptions(command: Command): Command {
  return command
    .option(
      '--cache <list>',
      "page-cache sizes to run at: bytes (8GiB), shares of the dataset (50%), 0, or 'recommended' (whatif's " +
        'smallest LRU cache that removes the fetch stall), e.g. 0,25%,50%,recommended or 8MiB',
    )
    .option('--cpus <list>', 'CPU counts to run at (affinity), e.g. 1,2')
    .option(
      '--cells <list>',
      'cells of whatif --matrix to run at, each CPUS@CACHE: the page cache held at CACHE with the job on CPUS ' +
        'CPUs, e.g. 1@25%,2@50%,1@8GiB',
    )
    .option(
      '--latency <list>',
      'remote data: times to a first byte to run the cold mode at (each request delayed at the metering proxy), ' +
        'e.g. 60ms,100ms; compared with whatif --cache 0 --latency',
    )
    .option(
      '--storage-bw <list>',
      "read bandwidths to run the cold mode at (a storage throttle, or for remote data the metering proxy's " +
        'cap), e.g. 20MB/s,80MB/s; compared with whatif --cache 0 --storage-bw',
    )
    .option(
      '--write-bw <list>',
      "write bandwidths to run the cached mode at (every disk's writes held to the rate by a cgroup write " +
        'throttle; root), e.g. 20MB/s,50MB/s; the checkpoint stall and iteration time compared with whatif --write-bw',
    )
    .option(
      '--workers <list>',
      "loader worker counts per rank to run at (DSA_NUM_WORKERS overrides the training DataLoader's " +
        'num_workers), e.g. 2,4',
    );
}

/** How each point runs, and where its results go. */
function runOptions(command: Command): Command {
  return command
    .option(
      '--keep-reclaim',
      "leave DAMON's proactive reclaim running while the points run (by default paused as root, as profile does, " +
        'and turned back on after)',
    )
    .option('--epochs <n>', 'epochs per cache point; the first (cold) one is not measured', DEFAULTS.epochs)
    .option(
      '--precision <pct>',
      'control and CPU points stop when the 95% CI of the iteration time is within this',
      DEFAULTS.precision,
    )
    .option('--max-iterations <n>', 'iteration budget of control and CPU points', DEFAULTS.maxIterations)
    .option('--timeout <duration>', 'kill a point whose job runs longer than this', DEFAULTS.timeout)
    .option('--profiles-dir <dir>', 'folder searched for the newest profile', DEFAULTS.profilesDir)
    .option(
      '--reports-dir <dir>',
      "folder under which each run's validate-<time>/ folder is written (every point's job output and events)",
      'reports',
    )
    .option('--no-control', 'skip the control run (the profiled settings again, first)')
    .option('--json', 'print the comparison as JSON');
}

const VALIDATE_HELP = `
Cache points hold the dataset's page cache at each size with a cap in user
space: each dataset file the job closes enters an LRU, and the least recently
closed files are evicted (posix_fadvise) while the LRU holds more than the
size. No root or cgroup is needed (only to throttle storage as the profile
did); the job's own memory does not move the cap. A point whose dataset
residency (mincore) left ±10% of the size over its measured window is marked
"not held" and left out of the error. CPU points restrict the job with an
affinity mask (taskset); one whose threads escaped it is "not held" too.
The job is the profile's own command and dataset. The plan, with each point's
estimated time, is printed before the first point starts. Every run writes
REPORTS_DIR/validate-<time>/ (default reports/validate-<ms since 1970>/): one
folder per point with the job's output and events, kept after the run.
A control run at the profiled settings comes first: how far it lands from the
profile is the job's own run-to-run variation on this machine, the floor under
any prediction's error.
Write points (--write-bw) run the cached mode with the writes to every whole
disk (/sys/block less loop, RAM and zram devices: the profile does not record
where the job saves) held to the rate, and compare the checkpoint stall of its
own saves and its iteration time with whatif --write-bw; the disks held are
named in the report. On cgroup v1 the throttle holds what the job's processes
write themselves (fsync, ext4's write-back of a truncated file on close), not
the kernel's background writeback: buffered saves to new files are not slowed.

Examples:
  $ ds-analyzer validate --cache 25%,50%,75% --cpus 1,2
  $ ds-analyzer validate --cache recommended      # is the fetch stall gone there?
  $ ds-analyzer validate --cells 1@25%,2@50%      # cells of whatif --matrix: a CPU count and a cache size at once
  $ ds-analyzer validate --workers 2,4             # num_workers as whatif --workers predicts?
  $ ds-analyzer validate --storage-bw 4MB/s,8MB/s     # the cold mode at these bandwidths (remote data: the network), as whatif --cache 0 --storage-bw predicts?
  $ ds-analyzer validate --write-bw 20MB/s,50MB/s   # the checkpoint stall with slower storage, as whatif --write-bw predicts?
  $ ds-analyzer validate --latency 100ms              # remote data: the cold mode with a store farther away, as whatif --latency predicts?
  $ ds-analyzer validate profiles/train.json --cache 16GiB --epochs 3 --json`;
