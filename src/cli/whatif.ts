import { Command } from 'commander';
import { resolve } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import { newestProfile, readProfile } from '../store/profile-store.js';
import { renderWhatif } from '../report/whatif-terminal.js';
import { whatifOutput } from '../schema/whatif-output.js';
import { parseCacheSize, parseCacheSizeList, parseCountList, parseFraction, parsePositiveInt, parsePositiveNumber, parseLatencySec, parseRate, parseSize, percent, resolveCacheSize, type CacheSize } from '../units.js';
import { CHECKFREQ_OVERHEAD_BUDGET } from '../analysis/checkpoint-stall.js';
import { fitModel, isNotEnoughData } from '../whatif/model.js';
import { CACHE_POLICIES, type CachePolicy } from '../whatif/cache-policy.js';
import { whatifMatrix } from '../whatif/matrix.js';
import { matrixOutput } from '../schema/matrix-output.js';
import { renderMatrix } from '../report/matrix-terminal.js';
import type { Profile } from '../schema/profile.js';
import type { Io } from './io.js';
import { whatif, type WhatifQuery } from '../whatif/whatif.js';
import type { PipelineQuery } from '../whatif/pipeline-stalls.js';
import { notEnoughDataError } from './not-enough-data.js';
import { withExitCodes, type CommandFactory, type ExitCodeList } from './program.js';

/** Options of `whatif` as commander hands them over (strings, unparsed). */
interface RawWhatifOptions {
  cache?: string;
  cpus?: string;
  workers?: string;
  inFlight?: string;
  latency?: string;
  objectSize?: string;
  storageBw?: string;
  gpus?: string;
  gpuSpeedup?: string;
  cachePolicy?: string;
  epochs?: string;
  jobs?: string;
  coordinated?: boolean;
  nodes?: string;
  peerBw?: string;
  matrix?: boolean;
  matrixCpus?: string;
  matrixCache?: string;
  checkpointEvery?: string;
  writeBw?: string;
  asyncSave?: boolean;
  syncSave?: boolean;
  checkpointBudget?: string;
  failuresPerDay?: string;
  persistentWorkers?: string | boolean;
  prefetchFactor?: string;
  profilesDir: string;
  json?: boolean;
}

/** The exit codes `whatif` can return, in its --help and docs/cli.md. */
const WHATIF_EXIT_CODES: ExitCodeList = [
  ExitCode.Ok,
  ExitCode.Usage,
  ExitCode.BadValue,
  { code: ExitCode.MissingInput, meaning: 'the profile does not exist, or it lacks a mode or measurement the question needs (the message names the field and how to measure it)' },
  { code: ExitCode.CorruptFile, meaning: 'the profile is corrupt (not JSON, wrong schemaVersion, malformed)' },
  ExitCode.Internal,
];

export const whatifCommand: CommandFactory = (io, result) => {
  const command = new Command('whatif')
    .description('predict throughput, epoch time and stalls with another cache size, CPU count, storage bandwidth or accelerator, from a profile')
    .argument('[profile]', 'profile file (default: the newest in --profiles-dir)')
    .option('--cache <size>', 'cache available to the dataset: bytes (64G, 512MiB, 1.5TB), a share of the dataset (50%), or 0 for none (default: the page cache the profiled host could give)')
    .option('--cpus <n>', 'CPUs of the server (default: as profiled)')
    .option('--workers <n>', 'loader workers per rank, DataLoader num_workers (default: as profiled; 0 loads in the training process)')
    .option('--storage-bw <rate>', 'storage read bandwidth of the server (for remote data, the network), e.g. 200MB/s (default: measured in the cold mode)')
    .option('--in-flight <n>', 'remote data: requests each loader worker keeps in flight (threads per worker; default: as profiled)')
    .option('--latency <ms>', 'remote data: time from a request to its first byte, e.g. 40ms for a store farther away (default: as measured in the cold mode)')
    .option('--object-size <size>', 'remote data: bytes of one object, fetched by one request: samples packed in shards of this size, e.g. 64MB (default: as profiled)')
    .option('--gpus <n>', 'data-parallel accelerators per server, sharing CPUs, cache and storage (default: as profiled)')
    .option('--gpu-speedup <x>', 'accelerator speed-up: compute time is divided by it, e.g. 2 for a twice-as-fast GPU', '1')
    .option('--cache-policy <policy>', `cache that holds the dataset: ${[...CACHE_POLICIES, 'partitioned'].join(' | ')} (MinIO: never evicts, as in CoorDL; partitioned, with --nodes: the dataset spread over the nodes' caches, a miss fetched from the peer that holds it, CoorDL)`, 'page-cache')
    .option('--nodes <n>', 'servers of the job, each as the other flags describe (its CPUs, --cache, storage, --gpus)')
    .option('--peer-bw <rate>', "with --cache-policy partitioned: bytes/s a node reads from a peer's cache (the network between the nodes), e.g. 1.2GB/s (default: what a profile over several nodes measured as its CLIs met)")
    .option('--epochs <n>', 'average over this many epochs of the job, the first one cold (default: the steady state, epoch 2 on)')
    .option('--jobs <n>', 'concurrent jobs on the server reading the same dataset (a hyper-parameter search), each with --gpus ranks: predicts them independent against coordinated (CoorDL: one fetch and prep of each sample for all)')
    .option('--coordinated', 'with --jobs: the asked scenario has the jobs share one fetch and prep of each sample')
    .option('--matrix', "print Synergy's table instead: predicted throughput at each CPU count and cache size of a grid, the other settings as given (versioned JSON with --json, for a scheduler)")
    .option('--matrix-cpus <list>', 'with --matrix: the CPU counts of the grid (default: 1, 2, 4, ... past twice the profiled count)')
    .option('--matrix-cache <list>', 'with --matrix: the cache sizes of the grid, bytes or shares of the dataset (default: 0,25%,50%,75%,100%)')
    .option('--checkpoint-every <k>', 'iterations between checkpoint saves (default: as profiled)')
    .option('--write-bw <rate>', 'bytes/s a checkpoint save writes at, e.g. 200MB/s (default: as the profiled saves wrote)')
    .option('--async-save', 'saves staged and written in the background (torch.distributed.checkpoint.async_save), the loop blocked for the staging only')
    .option('--sync-save', 'saves that block the loop until written (torch.save)')
    .option('--checkpoint-budget <pct>', "checkpointing's share of the training time to keep under, for the interval it needs (CheckFreq)", percent(CHECKFREQ_OVERHEAD_BUDGET))
    .option('--failures-per-day <n>', 'failures a day to expect: the work a failure loses at the asked interval, and the interval that loses least with the saves (Young)')
    .option('--persistent-workers [bool]', 'DataLoader persistent_workers: workers kept across epochs (true, or false)')
    .option('--prefetch-factor <n>', 'DataLoader prefetch_factor: batches each worker prepares ahead')
    .option('--profiles-dir <dir>', 'folder searched for the newest profile', 'profiles')
    .option('--json', 'print only the result JSON on stdout')
    .addHelpText(
      'after',
      `
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

The model (docs/whatif.md), per sample and rank:
  t = max(t_step, t_prep, d(t_prep_w, t_fetch))   with loader workers
  t = t_gpu + t_prep + t_fetch                     with --workers 0 (loads in series)
t_gpu is the synthetic mode's compute over --gpu-speedup; t_step adds the
hand-over of each ready batch and the step's slow-down beside the workers;
t_prep is prep CPU over what the workers and the CPUs give, t_prep_w the
workers' own share of it; t_fetch is the bytes the cache misses over the
storage bandwidth; d combines reads with the prep in series with them (from
the larger of the two when they overlap to their sum). Each parameter is
fitted from the profile's modes and listed with the measurement it comes
from. Predictions are for the steady
state (epoch 2 on) unless --epochs is given; the first epoch is always cold.
A profile that lacks a mode the model needs exits with code 4.`,
    )
    .action((profileArg: string | undefined, raw: RawWhatifOptions) => {
      const { query, cache } = parseWhatifOptions(raw);
      const pipelineQuery = parsePipelineOptions(raw);
      const path = profileArg ? resolve(io.cwd, profileArg) : newestProfile(resolve(io.cwd, raw.profilesDir));
      const profile = readProfile(path);
      if (query.partitioned && query.peerBytesPerSec === undefined) query.peerBytesPerSec = measuredPeerBandwidth(profile);
      if (raw.matrix) {
        result.exitCode = printMatrix(profile, path, query, raw, io);
        return;
      }
      // A share (50%) needs the dataset's size, which only the profile knows.
      if (cache) query.cacheBytes = resolveCacheSize(cache, profile.dataset.bytes);
      const outcome = whatif(profile, path, query, {}, pipelineQuery);
      if (isNotEnoughData(outcome)) throw notEnoughDataError(outcome);
      if (raw.json) io.stdout(JSON.stringify(whatifOutput(outcome), null, 1) + '\n');
      else io.stdout(renderWhatif(outcome));
      result.exitCode = ExitCode.Ok;
    });
  return withExitCodes(command, WHATIF_EXIT_CODES);
};

/**
 * Turns commander's strings into a what-if query, and the cache size apart
 * (a share is resolved against the profile's dataset); every error names its
 * flag (exit code 3).
 */
function parseWhatifOptions(raw: RawWhatifOptions): { query: WhatifQuery; cache: CacheSize | null } {
  const query: WhatifQuery = {};
  const cache = raw.cache === undefined ? null : parseCacheSize(raw.cache, '--cache');
  if (raw.cpus !== undefined) query.cpus = parsePositiveInt(raw.cpus, '--cpus');
  if (raw.workers !== undefined) query.workers = parseWorkerCount(raw.workers);
  if (raw.storageBw !== undefined) query.storageBytesPerSec = parseRate(raw.storageBw, '--storage-bw');
  if (raw.inFlight !== undefined) query.inFlightPerWorker = parsePositiveInt(raw.inFlight, '--in-flight');
  if (raw.latency !== undefined) query.requestLatencySec = parseLatencySec(raw.latency, '--latency');
  if (raw.objectSize !== undefined) query.objectBytes = parseSize(raw.objectSize, '--object-size');
  if (raw.gpus !== undefined) query.gpus = parsePositiveInt(raw.gpus, '--gpus');
  if (raw.gpuSpeedup !== undefined && raw.gpuSpeedup !== '1') query.gpuSpeedup = parsePositiveNumber(raw.gpuSpeedup, '--gpu-speedup');
  if (raw.nodes !== undefined) query.nodes = parsePositiveInt(raw.nodes, '--nodes');
  if (raw.cachePolicy === 'partitioned') {
    if ((query.nodes ?? 1) < 2) throw new UserError('--cache-policy partitioned spreads the dataset over several nodes: give --nodes 2 or more', ExitCode.Usage);
    query.partitioned = true;
    query.cachePolicy = 'minio';
  } else if (raw.peerBw !== undefined) {
    throw new UserError('--peer-bw is the network a partitioned cache fetches over: add --cache-policy partitioned and --nodes N', ExitCode.Usage);
  }
  if (raw.peerBw !== undefined) query.peerBytesPerSec = parseRate(raw.peerBw, '--peer-bw');
  if (raw.cachePolicy !== undefined && raw.cachePolicy !== 'page-cache' && raw.cachePolicy !== 'partitioned') {
    if (!(CACHE_POLICIES as readonly string[]).includes(raw.cachePolicy)) {
      throw new UserError(`--cache-policy: unknown policy '${raw.cachePolicy}'; use ${[...CACHE_POLICIES, 'partitioned'].join(', ')}`, ExitCode.BadValue);
    }
    query.cachePolicy = raw.cachePolicy as CachePolicy;
  }
  if (raw.epochs !== undefined) query.epochs = parsePositiveInt(raw.epochs, '--epochs');
  if (raw.jobs !== undefined) query.jobs = parsePositiveInt(raw.jobs, '--jobs');
  if (raw.coordinated) {
    if ((query.jobs ?? 1) < 2) throw new UserError('--coordinated shares fetch and prep among jobs: give --jobs 2 or more', ExitCode.Usage);
    query.coordinated = true;
  }
  if (!raw.matrix && (raw.matrixCpus !== undefined || raw.matrixCache !== undefined)) {
    throw new UserError('--matrix-cpus and --matrix-cache set the grid of --matrix: add --matrix', ExitCode.Usage);
  }
  return { query, cache };
}

/** The checkpoint and loader flags, parsed; each error names its flag. */
function parsePipelineOptions(raw: RawWhatifOptions): PipelineQuery {
  if (raw.asyncSave && raw.syncSave) throw new UserError('--async-save and --sync-save ask for two save modes at once: give one', ExitCode.Usage);
  const query: PipelineQuery = {};
  if (raw.checkpointEvery !== undefined) query.checkpointEvery = parsePositiveInt(raw.checkpointEvery, '--checkpoint-every');
  if (raw.writeBw !== undefined) query.writeBytesPerSec = parseRate(raw.writeBw, '--write-bw');
  if (raw.asyncSave) query.saveMode = 'async';
  if (raw.syncSave) query.saveMode = 'sync';
  if (raw.checkpointBudget !== undefined) query.overheadBudget = parseFraction(raw.checkpointBudget, '--checkpoint-budget');
  if (raw.failuresPerDay !== undefined) query.failuresPerDay = parsePositiveNumber(raw.failuresPerDay, '--failures-per-day');
  if (raw.persistentWorkers !== undefined) query.persistentWorkers = parseBoolean(raw.persistentWorkers, '--persistent-workers');
  if (raw.prefetchFactor !== undefined) query.prefetchFactor = parsePositiveInt(raw.prefetchFactor, '--prefetch-factor');
  return query;
}

/** A flag's optional true/false value: given alone, true. */
function parseBoolean(value: string | boolean, flag: string): boolean {
  if (typeof value === 'boolean') return value;
  const text = value.toLowerCase();
  if (['true', 'yes', '1', 'on'].includes(text)) return true;
  if (['false', 'no', '0', 'off'].includes(text)) return false;
  throw new UserError(`${flag}: '${value}' is not true or false`, ExitCode.BadValue);
}

/** whatif --matrix: the table over the grid asked (its axes replace --cpus and --cache), as text or versioned JSON. */
function printMatrix(profile: Profile, path: string, query: WhatifQuery, raw: RawWhatifOptions, io: Io): ExitCode {
  if (query.cpus !== undefined || raw.cache !== undefined) {
    throw new UserError('--matrix sets CPUs and cache per cell: give the grid with --matrix-cpus and --matrix-cache instead of --cpus and --cache', ExitCode.Usage);
  }
  const fit = fitModel(profile);
  if (fit.kind === 'not-enough-data') throw notEnoughDataError(fit);
  const axes = {
    ...(raw.matrixCpus !== undefined ? { cpus: parseCountList(raw.matrixCpus, '--matrix-cpus', 1) } : {}),
    ...(raw.matrixCache !== undefined
      ? { cacheBytes: parseCacheSizeList(raw.matrixCache, '--matrix-cache').map((size) => resolveCacheSize(size as CacheSize, profile.dataset.bytes)) }
      : {}),
  };
  const matrix = whatifMatrix(fit.model, { path, jobName: profile.jobName }, axes, query);
  io.stdout(raw.json ? JSON.stringify(matrixOutput(matrix), null, 1) + '\n' : renderMatrix(matrix));
  return ExitCode.Ok;
}

/**
 * The network between nodes a multi-node profile measured as its CLIs met
 * (the slowest any node read at), for a partitioned cache's misses; a
 * UserError naming --peer-bw where it measured none.
 */
function measuredPeerBandwidth(profile: Profile): number {
  const measured = [profile.options.nodes?.peerBytesPerSec, ...(profile.nodes ?? []).map((n) => n.peerBytesPerSec)].filter((v): v is number => typeof v === 'number' && v > 0);
  if (measured.length === 0) {
    throw new UserError(
      "--cache-policy partitioned fetches a miss from a peer's cache: give --peer-bw RATE, the bytes/s one node reads from another; a profile over several nodes measures it (docs/multi-node.md), this one has none",
      ExitCode.Usage,
    );
  }
  return Math.min(...measured);
}

/** One num_workers count: a whole number of at least 0. */
function parseWorkerCount(text: string): number {
  const counts = parseCountList(text, '--workers');
  if (counts.length !== 1) throw new UserError(`--workers takes one count here (whatif predicts one scenario), got '${text}'`, ExitCode.BadValue);
  return counts[0];
}
