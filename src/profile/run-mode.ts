import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { StoppingTracker } from '../analysis/stopping.js';
import { summarizeIterations } from '../analysis/summarize.js';
import { mainCpuMsPerSample } from '../analysis/main-cpu.js';
import { markWarmup } from '../analysis/warmup.js';
import { pickPaceRank } from '../analysis/pace.js';
import { ENV, PROTOCOL_VERSION, type Mode } from '../schema/events.js';
import type { FirstBatch, Iteration, IterationSummary, ModeResult, RankResult, StateProof } from '../schema/profile.js';
import type { Dataset } from '../system/dataset/dataset.js';
import { startSampler, type Sampler, type SamplerOptions } from '../system/probes/samplers.js';
import type { GpuSampler } from '../system/probes/gpu.js';
import { EventsReader, processNode, type ProcessEvents } from './events-reader.js';
import { SupervisedJob, type Job, type JobExit, type StartJob } from './supervisor.js';
import { proveState } from './state-proof.js';
import { windowRates, windowReadProof } from './window-rates.js';
import { pythonHookEnv } from './python-hook.js';
import type { CacheState, PreparedState, StateFinish } from './cache-states/cache-state.js';
import type { DataSource, FetchReadings } from './data-sources/data-source.js';
import { writeSubsetList } from '../system/dataset/resident-subset.js';

/** What one mode needs to run. */
export interface ModeRunInput {
  /** The mode to run: which cache state, and what the job is told (DSA_MODE). */
  mode: Mode;
  /** The job's command. */
  argv: string[];
  /** Working folder of the job. */
  cwd: string;
  /** The CLI's environment, which the job inherits (the protocol's variables added). */
  env: NodeJS.ProcessEnv;
  /** The dataset the mode reads, as its data source listed it. */
  dataset: Dataset;
  /** The data source: meters the run's fetched bytes and says what limits its proof. */
  dataSource: Pick<DataSource, 'startMeter' | 'proofLimit' | 'fetchesFrom' | 'jobEnv'>;
  /** Folder for this mode's events and logs. */
  modeDir: string;
  /** Target relative half-width of the per-iteration time. */
  precision: number;
  /** Fewest iterations before precision may stop the mode. */
  minIterations: number;
  /** Iteration budget: the job is told it (DSA_ITERATIONS) and ends there. */
  maxIterations: number;
  /** Fewest blocks before precision may stop the mode (default MIN_STOP_BLOCKS). */
  minStopBlocks?: number;
  /** Seconds before the job is stopped whatever it reported. */
  timeoutSec: number;
  /** Seconds the job may run without reporting an iteration before it is stopped ('no-iterations'). */
  firstIterationTimeoutSec: number;
  /** Seconds the job gets to exit after the stop file appears, before SIGTERM. */
  stopGraceSec: number;
  /** Seconds between SIGTERM and SIGKILL. */
  killGraceSec: number;
  /** Synchronise the accelerator at iteration boundaries (DSA_SYNC). */
  sync: boolean;
  /** Sampling period of resources and events, ms. */
  pollMs: number;
  /** Wraps the job's argv (cgroup join, CPU affinity); identity when nothing to do. */
  wrapArgv: (argv: string[]) => string[];
  /** The mode's state, from the data source (its modeState, a held share, a capped cache). */
  cacheState: CacheState;
  /** Loader workers to ask the job for (DSA_NUM_WORKERS); absent: the script's own setting. */
  numWorkers?: number;
  /** GPU sampler whose latest reading goes into each resource sample. */
  gpu?: Pick<GpuSampler, 'latest'>;
  /** Called about every poll with the progress of the mode. */
  onProgress?: (progress: ModeProgress) => void;
  /**
   * Awaited once the mode's cache state is set, just before the job starts:
   * a profile over several nodes waits there until every node has set its own
   * (node-link.ts). A rejection ends the run before the job starts.
   */
  beforeJobStart?: () => Promise<void>;
  /** Called once the job is running, so an interrupt can reach it. */
  onJobStarted?: (job: Job) => void;
  /** Starts the job: SupervisedJob.start unless a test passes a fake (src/profile/fake-job.ts). */
  startJob?: StartJob;
  /** Starts the resource sampler: startSampler unless a test passes a fake (src/system/probes/fake-sampler.ts). */
  startSampler?: (options: SamplerOptions) => Sampler;
  /** Reports whether the user interrupted. */
  interrupted: () => boolean;
}

/** Live state of a running mode. */
export interface ModeProgress {
  /** The mode running. */
  mode: Mode;
  /** Iterations reported so far by the slowest rank. */
  iterations: number;
  /** The mode's iteration budget. */
  maxIterations: number;
  /** Relative CI half-width so far, when known. */
  relativePrecision: number | null;
  /** Median per-iteration time so far, ms. */
  medianIterMs: number | null;
  /** Seconds since the job started. */
  elapsedSec: number;
}

/** Where one run keeps its events, stop request and logs. */
interface RunFiles {
  eventsDir: string;
  stopFile: string;
  logs: { stdout: string; stderr: string };
}

/** How the supervision loop ended the job. */
interface Supervised {
  exit: JobExit;
  /** Why the profiler asked the job to stop, or null when it did not. */
  stopReason: 'precision' | 'budget' | null;
  /** True when the job reported no iteration before firstIterationTimeoutSec. */
  noIterations: boolean;
}

/** Runs the job once in `mode`: sets the cache state, supervises, collects, proves the state. */
export async function runMode(input: ModeRunInput): Promise<ModeResult> {
  const files = freshRunFiles(input.modeDir);
  const prepared = await input.cacheState.prepare(input.mode, input.dataset);
  // A cached mode on a resident subset measures the subset: the job is asked to sample only from it (DSA_SUBSET_FILE).
  const subset = prepared.subset;
  const subsetFile = subset ? join(input.modeDir, 'subset.txt') : null;
  if (subset && subsetFile) writeSubsetList(subsetFile, subset.dataset.files, input.cwd);
  if (input.beforeJobStart) {
    try {
      await input.beforeJobStart();
    } catch (error) {
      await prepared.finish();
      throw error;
    }
  }
  const startedAt = Date.now();
  // The profiler's own CPU competes with a CPU-bound job on a small machine: measured, so it can be named.
  const profilerCpuBefore = process.cpuUsage();
  const meter = input.dataSource.startMeter(input.mode, input.dataset, [input.modeDir]);
  const reader = new EventsReader(files.eventsDir);
  const sampler = (input.startSampler ?? startSampler)({ rootPid: null, device: input.dataset.device, intervalMs: input.pollMs, gpu: input.gpu });
  let job: Job;
  try {
    job = await (input.startJob ?? SupervisedJob.start)({
      argv: input.wrapArgv(input.argv),
      env: jobEnv(input, files.eventsDir, files.stopFile, subsetFile, meter.jobEnv),
      stdoutFile: files.logs.stdout,
      stderrFile: files.logs.stderr,
      timeoutSec: input.timeoutSec,
      killGraceSec: input.killGraceSec,
      cwd: input.cwd,
    });
  } catch (error) {
    sampler.stop();
    await meter.finish([]);
    await prepared.finish();
    throw error;
  }
  sampler.setRoot(job.pid);
  meter.attach(job.pid);
  input.onJobStarted?.(job);
  const supervised = await supervise(job, reader, input, startedAt, files.stopFile);
  const profilerCpuSec = cpuSecSince(profilerCpuBefore);
  const sampled = sampler.stop();
  const cacheFinish = await prepared.finish();
  // After the job's tree is reaped: a meter of the tree's reads has all of them.
  const fetched = await meter.finish(sampled);
  // A source with its own counter (remote data) keeps it on the samples, where validate and the report read it.
  const resources = fetched.ownCounter ? sampled.map((s, k) => ({ ...s, fetchedBytes: fetched.series[k]?.bytes ?? 0 })) : sampled;
  const processes = reader.finish();

  const ranks = processes.filter((p) => p.start !== null || p.iterations.length > 0).map(toRankResult);
  const pace = pickPaceRank(ranks);
  const measuredIterations = pace?.summary ? pace.iterations.filter((it) => !it.warmup) : [];
  const state = proveRun(input, { processes, ranks, measuredIterations, fetched, prepared, cacheFinish, wallSec: (Date.now() - startedAt) / 1000 });
  const cpuRate = windowRates(resources, measuredIterations, (s) => s.jobCpuSec);
  const readRate = windowRates(fetched.series, measuredIterations, (s) => s.bytes);
  const jobReachedBudget = processes.some((p) => p.end?.reason === 'budget');
  const { status, reason } = supervised.noIterations && !input.interrupted()
    ? { status: 'failed' as const, reason: 'no-iterations' as const }
    : classify(supervised.exit, supervised.stopReason ?? (jobReachedBudget ? 'budget' : null), pace?.summary ?? null, input.interrupted());
  const subsetAck = processes.find((p) => p.start?.subsetFiles !== undefined)?.start;
  const subsetNote = processes.find((p) => p.start?.subsetNote !== undefined)?.start?.subsetNote;
  return {
    mode: input.mode,
    status,
    stopReason: reason,
    jobExitCode: supervised.exit.exitCode,
    jobSignal: supervised.exit.signal,
    startedAt,
    wallSec: (Date.now() - startedAt) / 1000,
    state,
    ranks,
    paceRank: pace?.rank ?? null,
    summary: pace?.summary ?? null,
    resources,
    jobCpuSecPerSample: cpuRate?.perSample ?? null,
    storageReadBytesPerSec: readRate?.perSec ?? null,
    badEventLines: processes.reduce((sum, p) => sum + p.badLines, 0),
    logs: files.logs,
    cpus: null,
    profilerCpuSec,
    ...(input.numWorkers !== undefined ? { workersAsked: input.numWorkers } : {}),
    ...(fetched.network ? { network: fetched.network } : {}),
    firstBatch: firstBatchOf(ranks, startedAt),
    ...(subset
      ? { subset: { ...subset.record, jobSamples: subsetAck?.subsetFiles ?? null, ...(subsetNote !== undefined ? { jobNote: subsetNote } : {}) } }
      : {}),
  };
}

/**
 * The job's first batch: the last rank's, from the job's start; null when no
 * rank reported an iteration. The loader's first wait starts at iter(loader)
 * where the job timed it (its first epoch event: workers are started there),
 * else at its first request for a batch.
 */
export function firstBatchOf(ranks: readonly RankResult[], startedAt: number): FirstBatch | null {
  const firsts = ranks.flatMap((r) => (r.iterations[0] ? [{ it: r.iterations[0], epoch: r.epochs?.find((e) => e.epoch === 0 && e.i === r.iterations[0].i) }] : []));
  if (firsts.length === 0) return null;
  const last = firsts.reduce((a, b) => (b.it.t > a.it.t ? b : a));
  const sec = Math.max(0, (last.it.t - startedAt) / 1000);
  const firstWaitSec = Math.min(sec, (last.it.waitMs + (last.epoch?.createMs ?? 0)) / 1000);
  return { sec, startupSec: sec - firstWaitSec, firstWaitSec };
}

/** The run's folder, emptied: a folder left by an earlier run to the same --out must not lend it events or a stop request. */
function freshRunFiles(modeDir: string): RunFiles {
  const eventsDir = join(modeDir, 'events');
  rmSync(modeDir, { recursive: true, force: true });
  mkdirSync(eventsDir, { recursive: true });
  return { eventsDir, stopFile: join(modeDir, 'STOP'), logs: { stdout: join(modeDir, 'stdout.log'), stderr: join(modeDir, 'stderr.log') } };
}

/**
 * Polls the job's events until it exits: stops it once every rank measured
 * enough (the stop file, then SIGTERM after the grace), or early when it
 * never reports an iteration (no DataLoader, no manual API) rather than at
 * --timeout.
 */
async function supervise(job: Job, reader: EventsReader, input: ModeRunInput, startedAt: number, stopFile: string): Promise<Supervised> {
  let stopReason: Supervised['stopReason'] = null;
  let noIterations = false;
  // One incremental stopping rule per events file: a check costs O(new iterations) plus the MSER scan, not a re-summary.
  const trackers = new Map<string, StoppingTracker>();
  let exited = false;
  void job.done.then(() => (exited = true));
  while (!exited) {
    await Promise.race([job.done, sleep(input.pollMs)]);
    if (exited || stopReason !== null || noIterations) continue;
    const polled = reader.poll();
    if ((Date.now() - startedAt) / 1000 > input.firstIterationTimeoutSec && !polled.some((p) => p.iterations.length > 0)) {
      noIterations = true;
      void job.terminate();
      continue;
    }
    const decision = decideStop(polled, input, trackers);
    input.onProgress?.({ ...decision.progress, elapsedSec: (Date.now() - startedAt) / 1000 });
    if (decision.stop) {
      stopReason = decision.reason;
      writeFileSync(stopFile, 'enough data\n');
      job.markStopRequested();
      const grace = setTimeout(() => void job.terminate(), input.stopGraceSec * 1000);
      void job.done.then(() => clearTimeout(grace));
    }
  }
  return { exit: await job.done, stopReason, noIterations };
}

/** What a finished run hands its proof. */
interface RunEvidence {
  processes: ProcessEvents[];
  ranks: RankResult[];
  /** The pace-setting rank's iterations after its warm-up. */
  measuredIterations: Iteration[];
  fetched: FetchReadings;
  prepared: PreparedState;
  cacheFinish: StateFinish;
  wallSec: number;
}

/**
 * The run's state proof from the data source's evidence (its state's
 * residency, its meter's bytes over the measured window, or over the whole
 * run when its readings do not cover the window) and the job's (the bytes and
 * samples it consumed, whether it acknowledged the mode and kept a subset).
 */
function proveRun(input: ModeRunInput, run: RunEvidence): StateProof {
  const subset = run.prepared.subset;
  const measured = subset?.dataset ?? input.dataset;
  const allIterations = run.ranks.flatMap((r) => r.iterations);
  const samples = allIterations.reduce((sum, it) => sum + it.samples, 0);
  const reportedBytes = allIterations.every((it) => it.bytes !== undefined) ? allIterations.reduce((sum, it) => sum + (it.bytes ?? 0), 0) : null;
  // A source's own counter (the proxy, a FUSE daemon's sockets) counts the data's traffic alone, so the cold mode
  // is judged over the whole run: a window misses the reads a deep prefetch made before it opened, when the job
  // ends at its data's end (8 workers x 2 batches ahead counted 85% on a GPU job). The cached mode keeps the
  // window: the start-up's metadata (an s3fs HEAD per file an ImageFolder lists) would count against it (5.2%
  // over a whole run, seen), and a read during its window is what disproves it. The job tree's read_bytes also
  // count imports and model loading, so local files are judged over the window, where the readings cover it.
  const wholeRun = input.mode === 'cold' && run.fetched.ownCounter === true && run.fetched.wholeRunBytes !== null;
  const window = wholeRun ? null : windowReadProof(run.fetched.series, run.measuredIterations, allIterations, measured.sampleBytes ?? measured.meanFileBytes);
  const subsetAck = run.processes.find((p) => p.start?.subsetFiles !== undefined)?.start;
  const subsetNote = run.processes.find((p) => p.start?.subsetNote !== undefined)?.start?.subsetNote;
  return proveState({
    mode: input.mode,
    residentBytesBefore: run.prepared.residentBytesBefore,
    datasetBytes: measured.bytes,
    readBytes: window?.readBytes ?? run.fetched.wholeRunBytes,
    readBytesSource: window ? run.fetched.seriesSource : run.fetched.wholeRunSource,
    fetchesFrom: input.dataSource.fetchesFrom,
    consumedBytes: window?.consumedBytes ?? reportedBytes ?? samples * (measured.sampleBytes ?? measured.meanFileBytes),
    consumedSamples: window?.consumedSamples ?? samples,
    consumedBytesEstimated: reportedBytes === null,
    jobAcknowledgedMode: run.processes.some((p) => p.start?.mode === input.mode),
    fitsInMemory: measured.fitsInMemory,
    reEvictions: run.cacheFinish.reEvictions,
    keeper: run.cacheFinish.keeper && { ...run.cacheFinish.keeper, modeWallSec: run.wallSec },
    sourceLimit: input.dataSource.proofLimit(input.mode, input.dataset) ?? run.fetched.proofLimit ?? null,
    ...(subset ? { subset: { files: subset.record.files, reason: subset.record.reason, jobSamples: subsetAck?.subsetFiles, jobNote: subsetNote } } : {}),
    otherReads: run.fetched.otherReads(window && run.measuredIterations.length > 0 ? run.measuredIterations[0].t : -Infinity),
  });
}

/** CPU seconds (user + system) this process used since `before`. */
function cpuSecSince(before: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1e6;
}

function jobEnv(
  input: ModeRunInput,
  eventsDir: string,
  stopFile: string,
  subsetFile: string | null,
  meterEnv: Record<string, string> | undefined,
): Record<string, string | undefined> {
  return {
    ...input.env,
    ...(meterEnv ?? input.dataSource.jobEnv()),
    ...pythonHookEnv(input.env),
    [ENV.mode]: input.mode,
    [ENV.eventsDir]: eventsDir,
    [ENV.iterations]: String(input.maxIterations),
    [ENV.stopFile]: stopFile,
    [ENV.sync]: input.sync ? '1' : '0',
    [ENV.protocol]: String(PROTOCOL_VERSION),
    ...(subsetFile !== null ? { [ENV.subsetFile]: subsetFile } : {}),
    ...(input.numWorkers !== undefined ? { [ENV.numWorkers]: String(input.numWorkers) } : {}),
  };
}

function toRankResult(events: ProcessEvents): RankResult {
  const workers = events.start?.workers ?? null;
  const summary = summarizeIterations(events.iterations, { workers });
  const mainCpu = summary ? mainCpuMsPerSample(events.iterations, summary.warmupIterations) : null;
  return {
    rank: events.start?.rank ?? 0,
    node: processNode(events, hostname()),
    pid: events.start?.pid ?? 0,
    workers,
    ...(events.start?.loader ? { loader: events.start.loader } : {}),
    ...(mainCpu !== null ? { mainCpuMsPerSample: mainCpu } : {}),
    iterations: markWarmup(events.iterations, summary?.warmupIterations ?? 0),
    summary,
    ...(events.checkpoints.length > 0 ? { checkpoints: events.checkpoints.map(({ v: _v, type: _type, rank: _rank, ...record }) => record) } : {}),
    ...(events.epochs.length > 0 ? { epochs: events.epochs.map(({ v: _v, type: _type, rank: _rank, ...record }) => record) } : {}),
  };
}

/** Stops when every rank that reported has measured enough. */
function decideStop(processes: ProcessEvents[], input: ModeRunInput, trackers: Map<string, StoppingTracker>) {
  const decisions = processes
    .filter((p) => p.iterations.length > 0)
    .map((p) => {
      const workers = p.start?.workers ?? null;
      let tracker = trackers.get(p.file);
      // The start event (with the workers) may come after the first iterations: a new count, a new tracker.
      if (!tracker || tracker.workers !== workers) trackers.set(p.file, (tracker = new StoppingTracker(workers)));
      return tracker.decide(p.iterations, {
        precision: input.precision,
        minIterations: input.minIterations,
        maxIterations: input.maxIterations,
        workers,
        minBlocks: input.minStopBlocks,
      });
    });
  const slowest = decisions.reduce<(typeof decisions)[number] | null>(
    (worst, d) => (worst === null || (d.summary?.iterMs.mean ?? 0) > (worst.summary?.iterMs.mean ?? 0) ? d : worst),
    null,
  );
  const iterations = Math.min(...processes.map((p) => p.iterations.length), Infinity);
  const precisionReached = decisions.length > 0 && decisions.every((d) => d.stop) && !awaitingEpochBoundary(processes, input.maxIterations);
  return {
    stop: precisionReached,
    reason: decisions.some((d) => d.reason === 'precision') ? ('precision' as const) : ('budget' as const),
    progress: {
      mode: input.mode,
      iterations: Number.isFinite(iterations) ? iterations : 0,
      maxIterations: input.maxIterations,
      relativePrecision: slowest?.summary?.relativePrecision ?? null,
      medianIterMs: slowest?.summary?.medianIterMs ?? null,
    },
  };
}

/**
 * A precision stop waits for the training loader's first epoch boundary when
 * it comes within this many times the iterations already run: a boundary's
 * cost (workers started again, saves at the epoch's end) is measured only
 * there; a later one is estimated from the first epoch's start instead.
 */
export const EPOCH_WAIT_FACTOR = 3;

/** Whether a rank has yet to start its second epoch, due within the budget and EPOCH_WAIT_FACTOR of what it ran. */
export function awaitingEpochBoundary(processes: readonly Pick<ProcessEvents, 'epochs' | 'iterations'>[], maxIterations: number): boolean {
  return processes.some((p) => {
    const first = p.epochs.find((e) => e.epoch === 0);
    const length = first?.epochIterations ?? null;
    if (first === undefined || length === null || p.epochs.some((e) => e.epoch > 0)) return false;
    const boundary = first.i + length + 1;
    return boundary <= maxIterations && boundary <= EPOCH_WAIT_FACTOR * p.iterations.length;
  });
}

function classify(
  exit: JobExit,
  stopReason: 'precision' | 'budget' | null,
  summary: IterationSummary | null,
  interrupted: boolean,
): { status: ModeResult['status']; reason: ModeResult['stopReason'] } {
  if (interrupted) return { status: 'interrupted', reason: 'interrupted' };
  if (exit.timedOut) return summary ? { status: 'ok', reason: 'timeout' } : { status: 'failed', reason: 'timeout' };
  if (stopReason !== null) return { status: 'ok', reason: stopReason };
  if (exit.exitCode !== 0) return { status: 'failed', reason: 'job-failed' };
  if (!summary) return { status: 'failed', reason: 'no-iterations' };
  return { status: 'ok', reason: 'job-exit' };
}

