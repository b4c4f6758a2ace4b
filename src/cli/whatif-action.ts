import { resolve } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import { loadProfile, newestProfile } from '../store/profile-files.js';
import { renderWhatif } from '../report/whatif-terminal.js';
import { matrixOutput, whatifOutput } from '../schema/output-headers.js';
import { parseCacheSize, parseCacheSizeList, parseCountList, parseFraction, parsePositiveInt, parsePositiveNumber, parseLatencySec, parseRate, parseSize, resolveCacheSize, type CacheSize } from '../units.js';
import { fitModel, isNotEnoughData } from '../whatif/model.js';
import { CACHE_POLICIES, type CachePolicy } from '../whatif/cache-policy.js';
import type { Profile } from '../schema/profile.js';
import type { Io } from './io.js';
import { whatif, type WhatifQuery } from '../whatif/whatif.js';
import type { PipelineQuery } from '../whatif/pipeline-stalls.js';
import { notEnoughDataError } from './not-enough-data.js';

/** Options of `whatif` as commander hands them over (strings, unparsed). */
export interface RawWhatifOptions {
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

/** What `whatif` does once commander has parsed its flags: predict from the profile, print, return the exit code. */
export async function whatifAction(profileArg: string | undefined, raw: RawWhatifOptions, io: Io): Promise<ExitCode> {
  const { query, cache } = parseWhatifOptions(raw);
  const pipelineQuery = parsePipelineOptions(raw);
  const path = profileArg ? resolve(io.cwd, profileArg) : newestProfile(resolve(io.cwd, raw.profilesDir));
  const profile = await loadProfile(path);
  if (query.partitioned && query.peerBytesPerSec === undefined) query.peerBytesPerSec = measuredPeerBandwidth(profile);
  if (raw.matrix) return printMatrix(profile, path, query, raw, io);
  // A share (50%) needs the dataset's size, which only the profile knows.
  if (cache) query.cacheBytes = resolveCacheSize(cache, profile.dataset.bytes);
  const outcome = whatif(profile, path, query, {}, pipelineQuery);
  if (isNotEnoughData(outcome)) throw notEnoughDataError(outcome);
  if (raw.json) io.stdout(JSON.stringify(whatifOutput(outcome), null, 1) + '\n');
  else io.stdout(renderWhatif(outcome));
  return ExitCode.Ok;
}

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

/** whatif --matrix: the table over the grid asked (its axes replace --cpus and --cache), as text or versioned JSON. Its modules load only here. */
async function printMatrix(profile: Profile, path: string, query: WhatifQuery, raw: RawWhatifOptions, io: Io): Promise<ExitCode> {
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
  const [{ whatifMatrix }, { renderMatrix }] = await Promise.all([import('../whatif/matrix.js'), import('../report/matrix-terminal.js')]);
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
