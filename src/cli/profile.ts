import { Command, Option } from 'commander';
import { hostname } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import { LocalFilesSource } from '../profile/data-sources/local-files.js';
import { RemoteObjectsSource, type NetMeter } from '../profile/data-sources/remote-objects.js';
import { parseRemoteSpec, redactUrl } from '../system/network/remote-spec.js';
import { artefactsDir, newProfilePath } from '../store/profile-store.js';
import { fileSink, redactingSink } from '../store/artifact-sink.js';
import type { ProfileRunInput } from '../profile/run-profile.js';
import { nodePlan } from '../profile/nodes/node-plan.js';
import { DEFAULT_PASSES, PROFILE_FLAG_DEFAULTS as DEFAULTS, SUPERVISION } from '../profile/run-defaults.js';
import { MODES, ModeSchema, type Mode } from '../schema/events.js';
import { parseCountList, parseDurationSec, parseFraction, parsePositiveInt, parseRate } from '../units.js';
import { collect, withExitCodes, type CommandFactory, type ExitCodeList } from './program.js';
import { runAndReport } from './run-and-report.js';
import { prepareGate, runGate } from '../gate/run-gate.js';
import type { Io } from './io.js';

/** Options of `profile` as commander hands them over (strings, unparsed). */
interface RawProfileOptions {
  data?: string[];
  remote?: string;
  endpoint?: string;
  proxyPort?: string;
  jobCache?: string;
  netMeter?: string;
  modes: string;
  precision: string;
  minIterations: string;
  maxIterations: string;
  timeout: string;
  firstIterationTimeout: string;
  storageBw?: string;
  dropCaches?: boolean;
  sync: boolean;
  out?: string;
  profilesDir: string;
  name?: string;
  json?: boolean;
  stopGrace: string;
  nvidiaSmi: string;
  cpus?: string;
  workers?: string;
  overlap?: boolean;
  keepReclaim?: boolean;
  redact?: boolean;
  singlePass?: boolean;
  separateLaunches?: boolean;
  gate?: string;
  baseline?: string;
  junit?: string;
  nnodes?: string;
  coordinator?: string;
  nodesTimeout: string;
}

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
  ExitCode.Environment,
  ExitCode.Internal,
  ExitCode.NodeLost,
  ExitCode.Interrupted,
];

export const profileCommand: CommandFactory = (io, result) => {
  const command = new Command('profile')
    .description('run a training command in synthetic, cached and cold modes and split its iteration time into compute, prep stall and fetch stall')
    .argument('[command...]', 'the training command, after --')
    .option('--data <dir>', 'dataset folder the job reads (repeatable)', collect)
    .option('--remote <url>', 'remote data the job reads instead: s3://BUCKET/PREFIX, or http(s) URLs with WebDataset braces (https://host/shard-{0000..0099}.tar); the job reaches it through a metering proxy (HTTP_PROXY)')
    .option('--endpoint <url>', 'with --remote s3://: the S3-compatible endpoint the job uses (default: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, else AWS)')
    .option('--proxy-port <n>', "with --remote: the metering proxy's port on 127.0.0.1 (default: any free one)")
    .option(
      '--net-meter <where>',
      "with --remote: where the cold mode's requests are counted: 'client' (in the job's Python HTTP clients: boto3, requests, urllib; the job reaches the origin directly) or 'proxy' (any client that honours HTTP_PROXY, at a CPU cost per MB) (default: client)",
    )
    .option('--job-cache <dir>', "with --remote: the job's own cache folder (WebDataset cache_dir, Streaming's local, LITDATA_CACHE_DIR): its files are deleted before the cold mode and while it runs, so every sample comes over the network")
    .option('--modes <list>', 'modes to run, in order', MODES.join(','))
    .option('--precision <pct>', 'stop a mode when the 95% CI of the iteration time is within this', DEFAULTS.precision)
    .option('--min-iterations <n>', 'measured iterations before precision may stop a mode', DEFAULTS.minIterations)
    .option('--max-iterations <n>', 'iteration budget per mode (DSA_ITERATIONS)', DEFAULTS.maxIterations)
    .option('--timeout <duration>', 'kill the job tree after this long in one mode', DEFAULTS.timeout)
    .option('--first-iteration-timeout <duration>', 'stop a mode whose job reports no iteration within this long', DEFAULTS.firstIterationTimeout)
    .option('--cpus <list>', 'also run the cached mode at each of these CPU counts (affinity), e.g. 1,2, so whatif can fit CPU scaling')
    .option('--workers <list>', "also run the cached mode at each of these loader worker counts (DSA_NUM_WORKERS overrides the training DataLoader's num_workers), e.g. 2,4,8, so whatif can fit how prep scales with workers")
    .option('--storage-bw <rate>', 'throttle storage reads of the cold mode (cgroup blkio/io.max), or with --remote the bytes from the origin (at the proxy), e.g. 50MB/s')
    .option('--overlap', 'also run the cold mode with part of the dataset held in the page cache, so whatif measures how reads and pre-processing overlap instead of assuming it')
    .option('--single-pass', 'run each mode once instead of twice in mirrored order (synthetic, cached, cold, cached, synthetic: the middle mode runs once, twice as long), which cancels a drift of the machine\'s pace; faster to start, blind to drift')
    .option(
      '--separate-launches',
      'start the job once a run instead of once for every mode (the job switches modes at iteration boundaries under the PyTorch hook, ds_analyzer.iterate() or the protocol\'s control file); for a job that must start fresh in each mode',
    )
    .option('--keep-reclaim', "leave DAMON's proactive reclaim (pageout of idle memory) running while profiling; by default it is paused, where running as root, and turned back on after")
    .option('--redact', "keep host names (as host-0, host-1), absolute paths (~/..., relative, or <abs>/name) and command-line secrets (--token VALUE, --password=...) out of the profile, and out of the job's saved logs once it ends (docs/side-effects.md); credentials in URLs and VAR=value are never written")
    .option('--drop-caches', 'evict with the global /proc/sys/vm/drop_caches (root) instead of per-file')
    .option('--no-sync', 'do not synchronise the accelerator at iteration boundaries (DSA_SYNC=0)')
    .option('--nnodes <n>', "nodes the job runs on, one ds-analyzer profile on each (default: torchrun's --nnodes in the command, else Slurm's node count under srun, else 1)")
    .option('--coordinator <host:port>', "where the nodes' profilers meet: an address of the node that hosts it and a free port (default: torchrun's rendezvous endpoint with its port + 1; under srun the first node, port 15000 + the job id's last 4 digits)")
    .option('--nodes-timeout <duration>', 'with several nodes: how long to wait for every node to arrive', DEFAULTS.nodesTimeout)
    .option('--out <file>', 'profile file to write (default: PROFILES_DIR/<name>-<time>.json); with several nodes, the merged profile, and each node writes its own beside it as <file>.<host>.json')
    .option('--profiles-dir <dir>', 'folder for profiles', DEFAULTS.profilesDir)
    .option('--name <name>', 'job name shown in reports (default: the script name)')
    .option('--json', 'print only the profile JSON on stdout')
    .option('--stop-grace <duration>', 'time the job gets to exit after it is asked to stop', DEFAULTS.stopGrace)
    .option('--gate <config>', 'then check the profile against the budgets in this config (docs/ci.md); exit 1 when one fails')
    .option('--baseline <file>', "with --gate: baseline profile for the config's regression rule")
    .option('--junit <file>', 'with --gate: write the verdict as JUnit XML')
    .addOption(new Option('--nvidia-smi <command>', 'nvidia-smi to sample GPUs with').default('nvidia-smi').hideHelp())
    .addHelpText(
      'after',
      `
Examples:
  $ ds-analyzer profile --data ./imagenet/train -- python train.py -a resnet18 ./imagenet
  $ ds-analyzer profile --data /data/shards --storage-bw 200MB/s --precision 2% -- torchrun --nproc_per_node 2 train.py
  $ ds-analyzer profile --data ./ds --modes cached,cold --json -- ./my-job --epochs 1 > profile.json
  $ ds-analyzer profile --data ./ds --cpus 1,2 -- python train.py ./ds      (CPU sweep for whatif --cpus)
  $ ds-analyzer profile --data ./ds --workers 2,4,8 -- python train.py ./ds (num_workers sweep, no code change)
  $ ds-analyzer profile --data ./ds --storage-bw 20MB/s --overlap -- python train.py ./ds   (measured overlap for whatif --cache)
  $ ds-analyzer profile --data ./ds --gate budgets.json --baseline main.json --junit gate.xml -- python train.py ./ds
  $ ds-analyzer profile --remote s3://datasets/train --endpoint http://10.0.0.5:9000 -- python train.py
  $ ds-analyzer profile --remote 'http://shards.local/train-{0000..0127}.tar' --storage-bw 100MB/s -- python train.py
  on each of 2 nodes (the one holding 10.0.0.1 hosts the coordinator and writes the merged profile):
  $ ds-analyzer profile --data /data/train --out run.json -- torchrun --nnodes 2 --nproc_per_node 8 --rdzv-backend c10d --rdzv-endpoint 10.0.0.1:29400 train.py
  $ srun -N 4 --ntasks-per-node 1 ds-analyzer profile --data /data/train --out run.json -- python train.py

The job learns its mode from DSA_MODE and writes events to DSA_EVENTS_DIR
(docs/protocol.md). PyTorch scripts need no change (see README).`,
    )
    .action(async (command: string[], raw: RawProfileOptions) => {
      const input = parseProfileOptions(command, raw, io);
      // A bad gate config fails before anything runs, not after minutes of profiling.
      const gate = raw.gate ? prepareGate({ config: raw.gate, baseline: raw.baseline, junit: raw.junit }, io.cwd) : null;
      if (!gate && (raw.baseline || raw.junit)) {
        throw new UserError(`--baseline and --junit need --gate CONFIG: name the budgets to check`, ExitCode.Usage);
      }
      const redact = raw.redact ? { home: io.env.HOME ?? null, cwd: io.cwd } : undefined;
      const { exitCode, outcome } = await runAndReport(redact ? { ...input, sink: redactingSink(fileSink, redact) } : input, io, { json: Boolean(raw.json), redact });
      // With --json stdout holds only the profile, so the verdict goes to stderr.
      result.exitCode = gate && exitCode === ExitCode.Ok ? runGate(outcome.profile, outcome.path, gate, raw.json ? { ...io, stdout: io.stderr } : io) : exitCode;
    });
  return withExitCodes(command, PROFILE_EXIT_CODES);
};

/** Files that name a job better than the launcher or interpreter that runs them. */
const SCRIPT = /\.(py|sh|js|mjs|cjs|ts|rb|pl|jl|lua)$/i;

/**
 * The job's name: its script (train.py in 'torchrun --nproc_per_node 2
 * train.py', where the first non-option argument is the option's value 2),
 * else the first argument that is not an option, else the command.
 */
export function jobNameOf(command: string[]): string {
  // Options and their inline values (--config=cfg.py) are not the script.
  const operand = (arg: string) => !arg.startsWith('-') && !arg.includes('=');
  const script = command.find((arg) => operand(arg) && SCRIPT.test(arg));
  const firstOperand = command.find((arg, k) => k > 0 && operand(arg));
  return basename(script ?? firstOperand ?? command[0]) || 'job';
}

/** Turns commander's strings into a validated run input; every error names its flag. */
function parseProfileOptions(command: string[], raw: RawProfileOptions, io: Io): ProfileRunInput {
  if (command.length === 0) {
    throw new UserError(`no training command: put it after '--', e.g. ds-analyzer profile --data ./ds -- python train.py`, ExitCode.Usage);
  }
  if (raw.remote && raw.data && raw.data.length > 0) {
    throw new UserError(`--data and --remote name the job's data twice: give one`, ExitCode.Usage);
  }
  if (!raw.remote && (!raw.data || raw.data.length === 0)) {
    throw new UserError(`--data is required: pass the folder the job reads its samples from (or --remote URL for data in object storage or at HTTP URLs)`, ExitCode.Usage);
  }
  if (!raw.remote && (raw.endpoint || raw.proxyPort || raw.jobCache || raw.netMeter)) {
    throw new UserError(`--endpoint, --proxy-port, --job-cache and --net-meter apply to --remote data only`, ExitCode.Usage);
  }
  const netMeter = parseNetMeter(raw.netMeter);
  const modes = parseModes(raw.modes);
  const jobName = raw.name ?? jobNameOf(command);
  const profilesDir = resolve(io.cwd, raw.profilesDir);
  const dataRoots = (raw.data ?? []).map((dir) => resolve(io.cwd, dir));
  const plan = nodePlan(command, io.env, {
    ...(raw.nnodes !== undefined ? { nnodes: parsePositiveInt(raw.nnodes, '--nnodes') } : {}),
    ...(raw.coordinator !== undefined ? { coordinator: raw.coordinator } : {}),
  });
  if (plan && raw.overlap) throw new UserError(`--overlap runs on one node only: profile the ${plan.nodes} nodes without it, or one node with it`, ExitCode.Usage);
  const mergedOutFile = raw.out ? resolve(io.cwd, raw.out) : newProfilePath(profilesDir, jobName);
  // Each node's own profile and run folders beside the merged one: on a shared folder they must not collide.
  const outFile = plan ? nodeProfilePath(mergedOutFile, hostname()) : mergedOutFile;
  const jobCacheDir = raw.jobCache ? checkJobCache(resolve(io.cwd, raw.jobCache), [io.cwd, outFile, io.env.HOME ?? '/']) : null;
  return {
    argv: command,
    cwd: io.cwd,
    env: io.env,
    jobName,
    dataRoots,
    ...(raw.remote ? { remote: { url: redactUrl(raw.remote), endpoint: raw.endpoint ? redactUrl(raw.endpoint) : null, jobCache: jobCacheDir, netMeter } } : {}),
    modes,
    precision: parseFraction(raw.precision, '--precision'),
    minIterations: parsePositiveInt(raw.minIterations, '--min-iterations'),
    maxIterations: parsePositiveInt(raw.maxIterations, '--max-iterations'),
    timeoutSec: parseDurationSec(raw.timeout, '--timeout'),
    firstIterationTimeoutSec: parseDurationSec(raw.firstIterationTimeout, '--first-iteration-timeout'),
    stopGraceSec: parseDurationSec(raw.stopGrace, '--stop-grace'),
    killGraceSec: SUPERVISION.killGraceSec,
    storageBwBytesPerSec: raw.storageBw ? parseRate(raw.storageBw, '--storage-bw') : null,
    dropCaches: Boolean(raw.dropCaches),
    sync: raw.sync,
    pollMs: SUPERVISION.pollMs,
    outFile,
    dataSource: raw.remote
      ? new RemoteObjectsSource(parseRemoteSpec(raw.remote, raw.endpoint, io.env), {
          cacheDir: join(artefactsDir(outFile), 'remote-cache'),
          proxyPort: raw.proxyPort ? parsePort(raw.proxyPort) : 0,
          env: io.env,
          jobCacheDir,
          netMeter,
        })
      : new LocalFilesSource(dataRoots, { dropCaches: Boolean(raw.dropCaches) }),
    nvidiaSmi: raw.nvidiaSmi,
    cpuSweep: raw.cpus ? parseCountList(raw.cpus, '--cpus', 1) : [],
    workersSweep: raw.workers ? parseCountList(raw.workers, '--workers') : [],
    overlapProbe: Boolean(raw.overlap),
    pauseReclaim: !raw.keepReclaim,
    passes: raw.singlePass ? 1 : DEFAULT_PASSES,
    separateLaunches: Boolean(raw.separateLaunches),
    ...(plan ? { nodes: { plan, timing: { arriveTimeoutSec: parseDurationSec(raw.nodesTimeout, '--nodes-timeout') }, mergedOutFile } } : {}),
  };
}

/** A node's own profile beside the merged one: run.json on host gpu-b is run.gpu-b.json. */
export function nodeProfilePath(mergedOutFile: string, host: string): string {
  const safe = host.replace(/[^A-Za-z0-9._-]/g, '_') || 'node';
  return mergedOutFile.endsWith('.json') ? `${mergedOutFile.slice(0, -'.json'.length)}.${safe}.json` : `${mergedOutFile}.${safe}.json`;
}

/**
 * The --job-cache folder, whose files the cold mode deletes: refused where a
 * slip of the path would delete what matters (the root, the home folder, the
 * working folder, the profile's own folder, or a folder holding any of them).
 */
function checkJobCache(dir: string, guarded: readonly string[]): string {
  const holds = (path: string) => path === dir || path.startsWith(dir === '/' ? '/' : `${dir}/`);
  const hit = guarded.find((path) => holds(resolve(path)));
  if (dir === '/' || hit !== undefined) {
    throw new UserError(`--job-cache ${dir}: its files are deleted in the cold mode, and it holds ${hit ?? '/'}: name the job's cache folder itself (its cache_dir or local setting)`, ExitCode.BadValue);
  }
  return dir;
}

/** --net-meter: where the cold mode's requests are counted. */
function parseNetMeter(text: string | undefined): NetMeter {
  if (text === undefined || text === 'client' || text === 'proxy') return text ?? 'client';
  throw new UserError(`--net-meter: '${text}' is not a meter: use client (in the job's HTTP clients) or proxy`, ExitCode.BadValue);
}

/** A TCP port for --proxy-port. */
function parsePort(text: string): number {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UserError(`--proxy-port: '${text}' is not a port (1-65535)`, ExitCode.BadValue);
  return port;
}

function parseModes(text: string): Mode[] {
  const modes = text.split(',').map((m) => m.trim()).filter(Boolean);
  for (const mode of modes) {
    if (!ModeSchema.safeParse(mode).success) {
      throw new UserError(`--modes: unknown mode '${mode}'; use any of ${MODES.join(', ')}`, ExitCode.BadValue);
    }
  }
  if (modes.length === 0 || new Set(modes).size !== modes.length) {
    throw new UserError(`--modes must list each of ${MODES.join(', ')} at most once`, ExitCode.BadValue);
  }
  return modes as Mode[];
}
