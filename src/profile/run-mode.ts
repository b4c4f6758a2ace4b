import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { stoppingDecision } from '../analysis/stopping.js';
import { summarizeIterations } from '../analysis/summarize.js';
import { pickPaceRank } from '../analysis/pace.js';
import { ENV, PROTOCOL_VERSION, type Mode } from '../schema/events.js';
import type { IterationSummary, ModeResult, RankResult } from '../schema/profile.js';
import type { Dataset } from '../system/dataset.js';
import { startSampler } from '../system/samplers.js';
import { selfReadBytes } from '../system/proc.js';
import type { GpuSampler } from '../system/gpu.js';
import { EventsReader, type ProcessEvents } from './events-reader.js';
import { SupervisedJob } from './supervisor.js';
import { proveState } from './state-proof.js';
import { windowRates, windowReadProof } from './window-rates.js';
import { pythonHookEnv } from './python-hook.js';
import type { CacheState } from './cache-state.js';

/** What one mode needs to run. */
export interface ModeRunInput {
  mode: Mode;
  /** The job's command. */
  argv: string[];
  cwd: string;
  dataset: Dataset;
  /** Folder for this mode's events and logs. */
  modeDir: string;
  /** Target relative half-width of the per-iteration time. */
  precision: number;
  minIterations: number;
  maxIterations: number;
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
  gpu?: Pick<GpuSampler, 'latest'>;
  /** Called about every poll with the progress of the mode. */
  onProgress?: (progress: ModeProgress) => void;
  /** Called once the job is running, so an interrupt can reach it. */
  onJobStarted?: (job: SupervisedJob) => void;
  /** Reports whether the user interrupted. */
  interrupted: () => boolean;
}

/** Live state of a running mode. */
export interface ModeProgress {
  mode: Mode;
  /** Iterations reported so far by the slowest rank. */
  iterations: number;
  maxIterations: number;
  /** Relative CI half-width so far, when known. */
  relativePrecision: number | null;
  /** Median per-iteration time so far, ms. */
  medianIterMs: number | null;
  /** Seconds since the job started. */
  elapsedSec: number;
}

/** Runs the job once in `mode`: sets the cache state, supervises, collects, proves the state. */
export async function runMode(input: ModeRunInput): Promise<ModeResult> {
  const eventsDir = join(input.modeDir, 'events');
  // A folder left by an earlier run to the same --out must not lend it events or a stop request.
  rmSync(input.modeDir, { recursive: true, force: true });
  mkdirSync(eventsDir, { recursive: true });
  const stopFile = join(input.modeDir, 'STOP');
  const logs = { stdout: join(input.modeDir, 'stdout.log'), stderr: join(input.modeDir, 'stderr.log') };

  const prepared = await input.cacheState.prepare(input.mode, input.dataset);
  const startedAt = Date.now();
  // The profiler's own CPU competes with a CPU-bound job on a small machine: measured, so it can be named.
  const profilerCpuBefore = process.cpuUsage();
  const readBytesBefore = selfReadBytes();
  const reader = new EventsReader(eventsDir);
  const sampler = startSampler({ rootPid: null, device: input.dataset.device, intervalMs: input.pollMs, gpu: input.gpu });
  let job: SupervisedJob;
  try {
    job = await SupervisedJob.start({
      argv: input.wrapArgv(input.argv),
      env: jobEnv(input, eventsDir, stopFile),
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

  let stopReason: 'precision' | 'budget' | null = null;
  let noIterations = false;
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
    const decision = decideStop(polled, input);
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
  const consumedBytes = reportedBytes ?? samples * input.dataset.meanFileBytes;
  const runReadBytes =
    readBytesBefore !== null && readBytesAfter !== null ? Math.max(0, readBytesAfter - readBytesBefore) : null;
  const measured = pace?.summary ? pace.iterations.slice(pace.summary.warmupIterations) : [];
  // The measured window when the samples cover it; the whole run otherwise.
  const window = windowReadProof(resources, measured, allIterations, input.dataset.meanFileBytes);
  const state = proveState({
    mode: input.mode,
    residentBytesBefore: prepared.residentBytesBefore,
    datasetBytes: input.dataset.bytes,
    readBytes: window?.readBytes ?? runReadBytes,
    readBytesSource: window
      ? 'read_bytes of the job tree over the measured window (/proc, sampled)'
      : runReadBytes === null
        ? '/proc/self/io is not readable'
        : 'read_bytes of the whole job tree over the whole run (/proc/self/io after reaping)',
    consumedBytes: window?.consumedBytes ?? consumedBytes,
    consumedBytesEstimated: reportedBytes === null,
    jobAcknowledgedMode: processes.some((p) => p.start?.mode === input.mode),
    fitsInMemory: input.dataset.fitsInMemory,
    reEvictions: cacheFinish.reEvictions,
  });

  const cpuRate = windowRates(resources, measured, (s) => s.jobCpuSec);
  const readRate = windowRates(resources, measured, (s) => s.jobReadBytes);
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
  };
}

/** CPU seconds (user + system) this process used since `before`. */
function cpuSecSince(before: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1e6;
}

function jobEnv(input: ModeRunInput, eventsDir: string, stopFile: string): Record<string, string> {
  return {
    ...pythonHookEnv(process.env),
    [ENV.mode]: input.mode,
    [ENV.eventsDir]: eventsDir,
    [ENV.iterations]: String(input.maxIterations),
    [ENV.stopFile]: stopFile,
    [ENV.sync]: input.sync ? '1' : '0',
    [ENV.protocol]: String(PROTOCOL_VERSION),
  };
}

function toRankResult(events: ProcessEvents): RankResult {
  const workers = events.start?.workers ?? null;
  return {
    rank: events.start?.rank ?? 0,
    pid: events.start?.pid ?? 0,
    workers,
    iterations: events.iterations,
    summary: summarizeIterations(events.iterations, { workers }),
  };
}

/** Stops when every rank that reported has measured enough. */
function decideStop(processes: ProcessEvents[], input: ModeRunInput) {
  const decisions = processes
    .filter((p) => p.iterations.length > 0)
    .map((p) =>
      stoppingDecision(p.iterations, {
        precision: input.precision,
        minIterations: input.minIterations,
        maxIterations: input.maxIterations,
        workers: p.start?.workers ?? null,
      }),
    );
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
  exit: Awaited<SupervisedJob['done']>,
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

