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
import type { IterationSummary, ModeResult, RankResult } from '../schema/profile.js';
import type { Dataset } from '../system/dataset/dataset.js';
import { startSampler, type Sampler, type SamplerOptions } from '../system/probes/samplers.js';
import { processTree, selfReadBytes } from '../system/kernel/proc.js';
import { OutsideReadsSampler, outsideReadsNote } from '../system/probes/open-files.js';
import { fileSystemLimit } from '../system/dataset/file-systems.js';
import type { GpuSampler } from '../system/probes/gpu.js';
import { EventsReader, processNode, type ProcessEvents } from './events-reader.js';
import { SupervisedJob, type Job, type JobExit, type StartJob } from './supervisor.js';
import { proveState } from './state-proof.js';
import { windowRates, windowReadProof } from './window-rates.js';
import { pythonHookEnv } from './python-hook.js';
import type { CacheState } from './cache-states/cache-state.js';
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
  /** The dataset the mode reads. */
  dataset: Dataset;
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
  /** Page-cache control for the mode's state. */
  cacheState: CacheState;
  /** Loader workers to ask the job for (DSA_NUM_WORKERS); absent: the script's own setting. */
  numWorkers?: number;
  /** GPU sampler whose latest reading goes into each resource sample. */
  gpu?: Pick<GpuSampler, 'latest'>;
  /** Called about every poll with the progress of the mode. */
  onProgress?: (progress: ModeProgress) => void;
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

// Period of the open-file sampling (a /proc scan for the tree, then the tree's fds): cheap at 2 s.
const OUTSIDE_SAMPLE_MS = 2000;

/** Runs the job once in `mode`: sets the cache state, supervises, collects, proves the state. */
export async function runMode(input: ModeRunInput): Promise<ModeResult> {
  const eventsDir = join(input.modeDir, 'events');
  // A folder left by an earlier run to the same --out must not lend it events or a stop request.
  rmSync(input.modeDir, { recursive: true, force: true });
  mkdirSync(eventsDir, { recursive: true });
  const stopFile = join(input.modeDir, 'STOP');
  const logs = { stdout: join(input.modeDir, 'stdout.log'), stderr: join(input.modeDir, 'stderr.log') };

  const prepared = await input.cacheState.prepare(input.mode, input.dataset);
  // A cached mode on a resident subset measures the subset: the job is asked to sample only from it (DSA_SUBSET_FILE).
  const subset = prepared.subset;
  const measured = subset?.dataset ?? input.dataset;
  const subsetFile = subset ? join(input.modeDir, 'subset.txt') : null;
  if (subset && subsetFile) writeSubsetList(subsetFile, subset.dataset.files, input.cwd);
  const startedAt = Date.now();
  // The profiler's own CPU competes with a CPU-bound job on a small machine: measured, so it can be named.
  const profilerCpuBefore = process.cpuUsage();
  const readBytesBefore = selfReadBytes();
  const reader = new EventsReader(eventsDir);
  const sampler = (input.startSampler ?? startSampler)({ rootPid: null, device: input.dataset.device, intervalMs: input.pollMs, gpu: input.gpu });
  let job: Job;
  try {
    job = await (input.startJob ?? SupervisedJob.start)({
      argv: input.wrapArgv(input.argv),
      env: jobEnv(input, eventsDir, stopFile, subsetFile),
      stdoutFile: logs.stdout,
      stderrFile: logs.stderr,
      timeoutSec: input.timeoutSec,
      killGraceSec: input.killGraceSec,
      cwd: input.cwd,
    });
  } catch (error) {
    sampler.stop();
    await prepared.finish();
    throw error;
  }
  sampler.setRoot(job.pid);
  input.onJobStarted?.(job);
  // Files read outside --data would pass for the dataset's reads: sample the tree's open files and name them.
  const outside = new OutsideReadsSampler(input.dataset.roots, [input.modeDir]);
  const outsideTimer = input.mode === 'synthetic' ? null : setInterval(() => outside.sample(processTree(job.pid)), OUTSIDE_SAMPLE_MS);
  outsideTimer?.unref();

  let stopReason: 'precision' | 'budget' | null = null;
  let noIterations = false;
  // One incremental stopping rule per events file: a check costs O(new iterations) plus the MSER scan, not a re-summary.
  const trackers = new Map<string, StoppingTracker>();
  let exited = false;
  void job.done.then(() => (exited = true));
  while (!exited) {
    await Promise.race([job.done, sleep(input.pollMs)]);
    if (exited || stopReason !== null || noIterations) continue;
    const polled = reader.poll();
    // A job that never reports an iteration (no DataLoader, no manual API)
    // would otherwise run until --timeout: stop it early and say how to fix it.
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
  const exit = await job.done;
  if (outsideTimer) clearInterval(outsideTimer);
  const profilerCpuSec = cpuSecSince(profilerCpuBefore);
  const resources = sampler.stop();
  const cacheFinish = await prepared.finish();
  // Linux adds a reaped child's I/O counters to its parent: after the job's
  // tree is reaped, our own read_bytes grew by everything the tree read.
  const readBytesAfter = selfReadBytes();
  const processes = reader.finish();

  const ranks = processes.filter((p) => p.start !== null || p.iterations.length > 0).map(toRankResult);
  const pace = pickPaceRank(ranks);
  const allIterations = ranks.flatMap((r) => r.iterations);
  const samples = allIterations.reduce((sum, it) => sum + it.samples, 0);
  const reportedBytes = allIterations.every((it) => it.bytes !== undefined)
    ? allIterations.reduce((sum, it) => sum + (it.bytes ?? 0), 0)
    : null;
  const consumedBytes = reportedBytes ?? samples * measured.meanFileBytes;
  const runReadBytes =
    readBytesBefore !== null && readBytesAfter !== null ? Math.max(0, readBytesAfter - readBytesBefore) : null;
  const measuredIterations = pace?.summary ? pace.iterations.filter((it) => !it.warmup) : [];
  // The measured window when the samples cover it; the whole run otherwise.
  const window = windowReadProof(resources, measuredIterations, allIterations, measured.meanFileBytes);
  const subsetAck = processes.find((p) => p.start?.subsetFiles !== undefined)?.start;
  const subsetNote = processes.find((p) => p.start?.subsetNote !== undefined)?.start?.subsetNote;
  const outsideNote = outsideReadsNote(outside.result());
  // The bound on a cold mode's proof counts only the outside files still open in the window its reads are from (a checkpoint loaded at start-up is not).
  const outsideInWindow = outside.result(window && measuredIterations.length > 0 ? measuredIterations[0].t : -Infinity);
  const state = proveState({
    mode: input.mode,
    residentBytesBefore: prepared.residentBytesBefore,
    datasetBytes: measured.bytes,
    readBytes: window?.readBytes ?? runReadBytes,
    readBytesSource: window
      ? 'read_bytes of the job tree over the measured window (/proc, sampled)'
      : runReadBytes === null
        ? '/proc/self/io is not readable'
        : 'read_bytes of the whole job tree over the whole run (/proc/self/io after reaping)',
    consumedBytes: window?.consumedBytes ?? consumedBytes,
    consumedSamples: window?.consumedSamples ?? samples,
    consumedBytesEstimated: reportedBytes === null,
    jobAcknowledgedMode: processes.some((p) => p.start?.mode === input.mode),
    fitsInMemory: measured.fitsInMemory,
    reEvictions: cacheFinish.reEvictions,
    keeper: cacheFinish.keeper && { ...cacheFinish.keeper, modeWallSec: (Date.now() - startedAt) / 1000 },
    // A dataset on tmpfs or NFS cannot be proven cold; on FUSE its reads are not the job's read_bytes (file-systems.ts).
    fileSystemLimit: fileSystemLimit(input.mode, input.dataset.fileSystems),
    ...(subset ? { subset: { files: subset.record.files, reason: subset.record.reason, jobSamples: subsetAck?.subsetFiles, jobNote: subsetNote } } : {}),
    outsideReads: outsideNote !== null ? { bytes: outsideInWindow.dirs.reduce((total, d) => total + d.bytes, 0), note: outsideNote } : null,
  });

  const cpuRate = windowRates(resources, measuredIterations, (s) => s.jobCpuSec);
  const readRate = windowRates(resources, measuredIterations, (s) => s.jobReadBytes);
  const jobReachedBudget = processes.some((p) => p.end?.reason === 'budget');
  const { status, reason } = noIterations && !input.interrupted()
    ? { status: 'failed' as const, reason: 'no-iterations' as const }
    : classify(exit, stopReason ?? (jobReachedBudget ? 'budget' : null), pace?.summary ?? null, input.interrupted());
  return {
    mode: input.mode,
    status,
    stopReason: reason,
    jobExitCode: exit.exitCode,
    jobSignal: exit.signal,
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
    logs,
    cpus: null,
    profilerCpuSec,
    ...(input.numWorkers !== undefined ? { workersAsked: input.numWorkers } : {}),
    ...(subset
      ? { subset: { ...subset.record, jobSamples: subsetAck?.subsetFiles ?? null, ...(subsetNote !== undefined ? { jobNote: subsetNote } : {}) } }
      : {}),
  };
}

/** CPU seconds (user + system) this process used since `before`. */
function cpuSecSince(before: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1e6;
}

function jobEnv(input: ModeRunInput, eventsDir: string, stopFile: string, subsetFile: string | null): Record<string, string | undefined> {
  return {
    ...input.env,
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
  const precisionReached = decisions.length > 0 && decisions.every((d) => d.stop);
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

