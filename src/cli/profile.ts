import { Command, Option } from 'commander';
import { ExitCode } from '../errors.js';
import { PROFILE_FLAG_DEFAULTS as DEFAULTS } from '../profile/run-defaults.js';
import { MODES } from '../schema/modes.js';
import type { RawProfileOptions } from './profile-action.js';
import { collect, withExitCodes, type CommandFactory, type ExitCodeList } from './program.js';

/** The exit codes `profile` can return, in its --help and docs/cli.md. */
const PROFILE_EXIT_CODES: ExitCodeList = [
  ExitCode.Ok,
  { code: ExitCode.GateFailed, meaning: 'with --gate: a budget at level error failed' },
  ExitCode.Usage,
  ExitCode.BadValue,
  { code: ExitCode.MissingInput, meaning: 'a --data path, the --gate config or the --baseline profile does not exist' },
  ExitCode.JobFailed,
  ExitCode.CommandNotFound,
  { code: ExitCode.CorruptFile, meaning: "the job's events hold no valid line, or the --baseline profile is corrupt" },
  {
    code: ExitCode.Environment,
    meaning:
      'the environment cannot do it (permissions, kernel features, a full disk), or the --remote endpoint failed or ' +
      'stopped answering (measured modes are saved)',
  },
  ExitCode.Internal,
  ExitCode.NodeLost,
  ExitCode.Interrupted,
];

export const profileCommand: CommandFactory = (io, result) => {
  const command = new Command('profile')
    .description(
      'run a training command in synthetic, cached and cold modes and split its iteration time into compute, ' +
        'prep stall and fetch stall',
    )
    .argument('[command...]', 'the training command, after --');
  for (const options of [dataOptions, measureOptions, extraRunOptions, jobOptions, nodeOptions, outputOptions])
    options(command);
  command.addHelpText('after', PROFILE_HELP).action(async (argv: string[], raw: RawProfileOptions) => {
    // Loaded when a profile runs: data sources, supervision and the report stay out of every other command's start-up.
    const { profileAction } = await import('./profile-action.js');
    result.exitCode = await profileAction(argv, raw, io);
  });
  return withExitCodes(command, PROFILE_EXIT_CODES);
};

/** The data the job reads: local folders, or remote data and how it is reached and metered. */
function dataOptions(command: Command): Command {
  return command
    .option('--data <dir>', 'dataset folder the job reads (repeatable)', collect)
    .option(
      '--remote <url>',
      'remote data the job reads instead: s3://BUCKET/PREFIX, or http(s) URLs with WebDataset braces ' +
        '(https://host/shard-{0000..0099}.tar); the job reaches it through a metering proxy (HTTP_PROXY)',
    )
    .option(
      '--endpoint <url>',
      'with --remote s3://: the S3-compatible endpoint the job uses (default: AWS_ENDPOINT_URL_S3, ' +
        'AWS_ENDPOINT_URL, else AWS)',
    )
    .option('--proxy-port <n>', "with --remote: the metering proxy's port on 127.0.0.1 (default: any free one)")
    .option(
      '--net-meter <where>',
      "with --remote: where the job's requests are counted and the cached mode answered: 'client' (in the job's " +
        'Python HTTP clients: boto3, requests, urllib, over HTTP and HTTPS; the job reaches the origin directly and ' +
        "the modes share one launch) or 'proxy' (any client that honours HTTP_PROXY, a launch a mode, at a CPU " +
        'cost per MB; over HTTPS its cached mode is unproven) (default: client)',
    )
    .option(
      '--job-cache <dir>',
      "with --remote: the job's own cache folder (WebDataset cache_dir, Streaming's local, LITDATA_CACHE_DIR): " +
        'its files are deleted before the cold mode and while it runs, so every sample comes over the network',
    );
}

/** How long each mode is measured, and when a job that makes no progress is stopped. */
function measureOptions(command: Command): Command {
  return command
    .option('--modes <list>', 'modes to run, in order', MODES.join(','))
    .option('--precision <pct>', 'stop a mode when the 95% CI of the iteration time is within this', DEFAULTS.precision)
    .option('--min-iterations <n>', 'measured iterations before precision may stop a mode', DEFAULTS.minIterations)
    .option('--max-iterations <n>', 'iteration budget per mode (DSA_ITERATIONS)', DEFAULTS.maxIterations)
    .option('--timeout <duration>', 'kill the job tree after this long in one mode', DEFAULTS.timeout)
    .option(
      '--first-iteration-timeout <duration>',
      'stop a mode whose job reports no iteration within this long',
      DEFAULTS.firstIterationTimeout,
    )
    .option(
      '--hang-timeout <duration>',
      'stop a job that reports no iteration for this long and 30x its median iteration, its processes idle: it looks hung',
      DEFAULTS.hangTimeout,
    );
}

/** The runs beyond the modes: CPU and worker sweeps, a read throttle and the overlap probe, for whatif. */
function extraRunOptions(command: Command): Command {
  return command
    .option(
      '--cpus <list>',
      'also run the cached mode at each of these CPU counts (affinity), e.g. 1,2, so whatif can fit CPU scaling',
    )
    .option(
      '--workers <list>',
      'also run the cached mode at each of these loader worker counts (DSA_NUM_WORKERS overrides the training ' +
        "DataLoader's num_workers), e.g. 2,4,8, so whatif can fit how prep scales with workers",
    )
    .option(
      '--storage-bw <rate>',
      'throttle storage reads of the cold mode (cgroup blkio/io.max), or with --remote the bytes from the origin ' +
        '(at the proxy), e.g. 50MB/s',
    )
    .option(
      '--overlap',
      'also run the cold mode with part of the dataset held in the page cache, so whatif measures how reads and ' +
        'pre-processing overlap instead of assuming it',
    );
}

/** How the job is scheduled and what it may do: its launches, its outputs, the machine beside it. */
function jobOptions(command: Command): Command {
  return command
    .option(
      '--single-pass',
      'run each mode once instead of twice in mirrored order (synthetic, cached, cold, cold, cached, synthetic: ' +
        "blocks of one launch where the job switches), which cancels a drift of the machine's pace; shorter, " +
        'blind to drift',
    )
    .option(
      '--separate-launches',
      'start the job once a run instead of once for every mode (the job switches modes at iteration boundaries ' +
        "under the PyTorch hook, ds_analyzer.iterate() or the protocol's control file); for a job that must " +
        'start fresh in each mode',
    )
    .option(
      '--keep-outputs',
      'let the job save its checkpoints and log to its trackers for real; by default its saves go to scratch ' +
        'files beside their targets (removed at its exit), W&B is disabled and MLflow and TensorBoard log under ' +
        "the profile's folder",
    )
    .option(
      '--continue',
      'profile the real training run: measure the blocks at its start, write the profile, then let the job train ' +
        'on to its end unprofiled (what a synthetic block trains is undone; checkpoints are saved for real) and ' +
        "exit with the job's exit code",
    )
    .option(
      '--allow-concurrent',
      'run even where another profile runs on this machine (by default refused, naming it): both profiles then ' +
        "say so, since each evicts the other's warmed data and takes its CPU",
    )
    .option(
      '--keep-reclaim',
      "leave DAMON's proactive reclaim (pageout of idle memory) running while profiling; by default it is " +
        'paused, where running as root, and turned back on after',
    )
    .option(
      '--redact',
      'keep host names (as host-0, host-1), absolute paths (~/..., relative, or <abs>/name) and command-line ' +
        "secrets (--token VALUE, --password=...) out of the profile, and out of the job's saved logs once it " +
        'ends (docs/side-effects.md); credentials in URLs and VAR=value are never written',
    )
    .option(
      '--as-user <user>',
      'start the job as this user (name or uid: their uid, gid, groups and HOME) while the profiler keeps root; ' +
        "the profile and its folder are theirs (default: under sudo, SUDO_USER; 'root' keeps the job root)",
    )
    .option(
      '--python <path>',
      "the job's interpreter, e.g. ~/venv/bin/python: its folder goes first on the job's PATH (python, torchrun " +
        'and the like in the command resolve there) and VIRTUAL_ENV is set; under sudo, what keeps your venv',
    )
    .option('--drop-caches', 'evict with the global /proc/sys/vm/drop_caches (root) instead of per-file')
    .option('--no-sync', 'do not synchronise the accelerator at iteration boundaries (DSA_SYNC=0)');
}

/** A job on several nodes, one profile on each. */
function nodeOptions(command: Command): Command {
  return command
    .option(
      '--nnodes <n>',
      "nodes the job runs on, one ds-analyzer profile on each (default: torchrun's --nnodes in the command, else " +
        "Slurm's node count under srun, else 1)",
    )
    .option(
      '--coordinator <host:port>',
      "where the nodes' profilers meet: an address of the node that hosts it and a free port (default: " +
        "torchrun's rendezvous endpoint with its port + 1; under srun the first node, port 15000 + the job id's " +
        'last 4 digits)',
    )
    .option(
      '--nodes-timeout <duration>',
      'with several nodes: how long to wait for every node to arrive',
      DEFAULTS.nodesTimeout,
    );
}

/** Where the profile goes, and the gate it is checked against. */
function outputOptions(command: Command): Command {
  return command
    .option(
      '--out <file>',
      'profile file to write (default: PROFILES_DIR/<name>-<time>.json); with several nodes, the merged profile, ' +
        'and each node writes its own beside it as <file>.<host>.json',
    )
    .option('--profiles-dir <dir>', 'folder for profiles', DEFAULTS.profilesDir)
    .option('--name <name>', 'job name shown in reports (default: the script name)')
    .option('--json', 'print only the profile JSON on stdout')
    .option('--stop-grace <duration>', 'time the job gets to exit after it is asked to stop', DEFAULTS.stopGrace)
    .option(
      '--gate <config>',
      'then check the profile against the budgets in this config (docs/ci.md); exit 1 when one fails',
    )
    .option('--baseline <file>', "with --gate: baseline profile for the config's regression rule")
    .option('--junit <file>', 'with --gate: write the verdict as JUnit XML')
    .addOption(new Option('--nvidia-smi <command>', 'nvidia-smi to sample GPUs with').default('nvidia-smi').hideHelp());
}

const PROFILE_HELP = `
Examples:
  $ ds-analyzer profile --data ./imagenet/train -- python train.py -a resnet18 ./imagenet
  $ ds-analyzer profile --data /data/shards --storage-bw 200MB/s --precision 2% -- torchrun --nproc_per_node 2 train.py
  $ ds-analyzer profile --data ./ds --modes cached,cold --json -- ./my-job --epochs 1 > profile.json
  $ ds-analyzer profile --data ./ds --cpus 1,2 -- python train.py ./ds      (CPU sweep for whatif --cpus)
  $ ds-analyzer profile --data ./ds --workers 2,4,8 -- python train.py ./ds (num_workers sweep, no code change)
  $ sudo ds-analyzer profile --python ~/venv/bin/python --data ./ds -- python train.py ./ds   (root for the profiler; the job runs as you, in your venv)
  $ ds-analyzer profile --data ./ds --storage-bw 20MB/s --overlap -- python train.py ./ds   (measured overlap for whatif --cache)
  $ ds-analyzer profile --data ./ds --gate budgets.json --baseline main.json --junit gate.xml -- python train.py ./ds
  $ ds-analyzer profile --remote s3://datasets/train --endpoint http://10.0.0.5:9000 -- python train.py
  $ ds-analyzer profile --remote 'http://shards.local/train-{0000..0127}.tar' --storage-bw 100MB/s -- python train.py
  on each of 2 nodes (the one holding 10.0.0.1 hosts the coordinator and writes the merged profile):
  $ ds-analyzer profile --data /data/train --out run.json -- torchrun --nnodes 2 --nproc_per_node 8 --rdzv-backend c10d --rdzv-endpoint 10.0.0.1:29400 train.py
  $ srun -N 4 --ntasks-per-node 1 ds-analyzer profile --data /data/train --out run.json -- python train.py

The job learns its mode from DSA_MODE and writes events to DSA_EVENTS_DIR
(docs/protocol.md). PyTorch scripts need no change (see README).`;
