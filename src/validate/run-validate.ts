import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { summarizeIterations } from '../analysis/summarize.js';
import { windowRates } from '../profile/window-rates.js';
import { median } from '../analysis/stats.js';
import { PageCacheState } from '../profile/cache-states/page-cache-state.js';
import { CappedCacheState } from '../profile/cache-states/capped-cache-state.js';
import { runMode, type ModeRunInput } from '../profile/run-mode.js';
import { Interrupts } from '../profile/interrupts.js';
import type { Profile, IterationSummary, ModeResult } from '../schema/profile.js';
import { tail } from '../profile/log-tail.js';
import { threadAffinities, withCpus } from '../system/affinity.js';
import { createJobCgroup, wrapCommand, type JobCgroup } from '../system/cgroups.js';
import { listDataset, type Dataset } from '../system/dataset.js';
import { baseScenario, predict, type FittedModel, type Scenario } from '../whatif/model.js';
import { judgeAffinity, judgeResidency, type AffinityVerdict, type ResidencyVerdict } from './held.js';
import type { ValidationPoint } from './plan.js';
import { CACHE_STATE_SETTINGS, CONTROL_MIN_ITERATIONS, SUPERVISION } from '../profile/run-defaults.js';

export type { ValidationPoint } from './plan.js';

/**
 * What a point's run amounts to: 'measured' tested the setting it asked for;
 * 'not-held' ran, but its cache or CPU setting did not hold, so it tested
 * another one (kept, left out of the model's error); 'failed' measured nothing.
 */
export type PointStatus = 'measured' | 'not-held' | 'failed';

export interface ValidationResult {
  point: ValidationPoint;
  /** Whether the point tested what it asked for (see PointStatus). */
  status: PointStatus;
  /** Cache points: how the dataset's residency went against the target over the measured window, else null. */
  residency: ResidencyVerdict | null;
  /** CPU points: whether the affinity reached every thread of the job, else null. */
  affinity: AffinityVerdict | null;
  /** Predicted samples/s (steady state) at the point; for a cache point, at the cache the job really had. */
  predictedSamplesPerSec: number;
  /** Cache points: mean dataset bytes resident over the measured window (mincore, sampled on large datasets), else null. */
  residentBytes: number | null;
  /** Cache points: the model's steady hit ratio at residentBytes, else null. */
  predictedHitRatio: number | null;
  /**
   * Cache points: 1 - storage bytes the job read per sample over the measured
   * window / (bytes per sample x read amplification), else null. Set beside
   * predictedHitRatio, it tells a wrong hit ratio from a wrong overlap of
   * fetch with the rest.
   */
  measuredHitRatio: number | null;
  /** Measured samples/s over the steady window, or null when the run failed. */
  measuredSamplesPerSec: number | null;
  /** 95% half-width of the measured rate, samples/s. */
  measuredHalfWidth: number | null;
  /** (predicted - measured) / measured. */
  relativeError: number | null;
  /** The prediction from the model anchored to the control run (see anchorToControl), or null without one. */
  anchoredSamplesPerSec: number | null;
  /** (anchored - measured) / measured. */
  anchoredError: number | null;
  /** What happened, in a few words (failed runs, the cap applied). */
  note: string;
  /** When the job did not end well: the last lines of its stderr (or stdout), for the report. */
  failureTail: string | null;
}

export interface ValidationReport {
  results: ValidationResult[];
  /** True when Ctrl-C stopped the run: results holds the points completed before it. */
  interrupted: boolean;
  /** Median of |relativeError| over the measured points (status 'measured'), the control left out. */
  medianAbsError: number | null;
  /** Points, the control left out, whose setting did not hold: the sizes or CPU counts not tested. */
  notHeld: number;
  /** |relativeError| of the control: the job's own run-to-run variation, which no model removes. */
  controlAbsError: number | null;
  /** Median of |anchoredError| over the points after the control. */
  anchoredMedianAbsError: number | null;
  /** Caveats of the model (assumed linear scaling, unproven modes). */
  modelCaveats: string[];
  /** Whether the model's overlap of reads and pre-processing was measured (σ fitted) or assumed. */
  overlapMeasured: boolean;
}

/** Live state of a running point. */
export interface PointProgress {
  /** Iterations so far (the pace-setting rank's). */
  iterations: number;
  /** Seconds since the job started. */
  elapsedSec: number;
  /** Cache points: the epoch running (1-based) and the epochs planned; null otherwise. */
  epoch: number | null;
  epochs: number | null;
  /** Cache points: the last residency reading, bytes; null otherwise or before the first. */
  residentBytes: number | null;
}

export interface ValidateInput {
  /** The profile whose model is validated, and whose job is run again. */
  profile: Profile;
  /** The what-if model fitted on the profile alone (its CPU sweep included, when it has one). */
  model: FittedModel;
  /** The points to run, in order. */
  points: ValidationPoint[];
  /** Epochs each cache point runs; the first (cold) is not measured. */
  epochs: number;
  /** Control and CPU points stop when the 95% CI of the iteration time is this tight (relative)... */
  precision: number;
  /** ...or after this many iterations. */
  maxIterations: number;
  /** Working folder of the job. */
  cwd: string;
  /** The CLI's environment: the job inherits it; its PATH finds taskset, its DSA_CGROUP_PARENT names a delegated cgroup. */
  env: NodeJS.ProcessEnv;
  /** Folder for the points' events, logs and residency readings. */
  workDir: string;
  /** Seconds before a point's job is stopped whatever it reported. */
  timeoutSec: number;
  /** Called when a point starts. */
  onPoint?: (point: ValidationPoint, index: number) => void;
  /** Called when a point has run, with its result. */
  onPointDone?: (result: ValidationResult, index: number) => void;
  /** Called about every poll while a point runs. */
  onProgress?: (index: number, progress: PointProgress) => void;
  /** Registers a SIGINT/SIGTERM handler; returns its remover. */
  onSignal: (handler: () => void) => () => void;
}

/**
 * Runs the profiled job again at other cache sizes (a cap holds the dataset's
 * page cache at each size: src/system/cache-cap.ts) and CPU counts (affinity),
 * and sets what it measures beside what the what-if model predicts. The model is fitted on the profile alone, so
 * each point is a prediction of a run it has not seen.
 */
export async function runValidation(input: ValidateInput): Promise<ValidationReport> {
  const { profile, model } = input;
  const base = baseScenario(model);
  const dataset = await listDataset(profile.options.data);
  const samplesPerIter = profile.modes.cached?.summary?.samplesPerIter ?? 1;
  const interrupts = new Interrupts(input.onSignal);
  const results: ValidationResult[] = [];
  let anchoredModel: FittedModel | null = null;
  try {
    for (const [index, point] of input.points.entries()) {
      if (interrupts.interrupted) break;
      input.onPoint?.(point, index);
      const scenario: Scenario =
        point.kind === 'cache'
          ? { ...base, cacheBytes: point.cacheBytes, cachePolicy: 'page-cache', epochs: null }
          : point.kind === 'cpus'
            ? { ...base, cacheBytes: dataset.bytes, cpus: point.cpus, epochs: null }
            : { ...base, cacheBytes: dataset.bytes, epochs: null };
      const measured = await measurePoint(point, { input, dataset, samplesPerIter, interrupts, index });
      // A point cut short by Ctrl-C is not a measurement; the ones before it are kept.
      if (interrupts.interrupted) break;
      // Predict at the cache the job really had, which the cap holds near, not exactly at, the target.
      const asRun = measured.residentBytes === null ? scenario : { ...scenario, cacheBytes: measured.residentBytes };
      const prediction = predict(model, asRun);
      const predicted = prediction.samplesPerSec;
      const missRatio = measured.readBytesPerSample === null ? null : measured.readBytesPerSample / (model.bytesPerSample * model.readAmplification);
      const anchoredRate = anchoredModel ? predict(anchoredModel, asRun).samplesPerSec : null;
      const rate = measured.summary ? measured.summary.samplesPerSec * measured.ranks : null;
      const status = pointStatus(rate, measured.residency, measured.affinity);
      if (point.kind === 'control' && rate) anchoredModel = anchorToControl(model, predicted / rate);
      const halfWidth = measured.summary?.iterMs.halfWidth != null && rate !== null ? (rate * measured.summary.iterMs.halfWidth) / measured.summary.iterMs.mean : null;
      results.push({
        point,
        status,
        residency: measured.residency,
        affinity: measured.affinity,
        predictedSamplesPerSec: predicted,
        residentBytes: measured.residentBytes,
        predictedHitRatio: point.kind === 'cache' ? prediction.steadyHitRatio : null,
        measuredHitRatio: point.kind === 'cache' && missRatio !== null ? Math.min(1, Math.max(0, 1 - missRatio)) : null,
        measuredSamplesPerSec: rate,
        measuredHalfWidth: halfWidth,
        relativeError: rate ? (predicted - rate) / rate : null,
        anchoredSamplesPerSec: anchoredRate,
        anchoredError: rate && anchoredRate ? (anchoredRate - rate) / rate : null,
        note: measured.note,
        failureTail: measured.failureTail,
      });
      input.onPointDone?.(results[results.length - 1], index);
    }
  } finally {
    interrupts.dispose();
  }
  return {
    results,
    interrupted: interrupts.interrupted,
    ...errorSummary(results),
    modelCaveats: model.caveats,
    overlapMeasured: model.overlapMeasured,
  };
}

/** A point's status from its measured rate and whether its cache and CPU settings held. */
export function pointStatus(rate: number | null, residency: ResidencyVerdict | null, affinity: AffinityVerdict | null): PointStatus {
  if (rate === null) return 'failed';
  return (residency?.held ?? true) && (affinity?.held ?? true) ? 'measured' : 'not-held';
}

/**
 * The model's errors over the points that tested their setting: a point not
 * held tested another setting, so it says nothing of the model's error and is
 * left out (and counted).
 */
export function errorSummary(results: readonly ValidationResult[]): Pick<ValidationReport, 'medianAbsError' | 'notHeld' | 'controlAbsError' | 'anchoredMedianAbsError'> {
  const points = results.filter((r) => r.point.kind !== 'control');
  const tested = points.filter((r) => r.status === 'measured');
  const control = results.find((r) => r.point.kind === 'control');
  return {
    medianAbsError: medianAbs(tested.map((r) => r.relativeError)),
    notHeld: points.filter((r) => r.status === 'not-held').length,
    controlAbsError: control?.relativeError != null ? Math.abs(control.relativeError) : null,
    anchoredMedianAbsError: medianAbs(tested.map((r) => r.anchoredError)),
  };
}

function medianAbs(errors: (number | null)[]): number | null {
  const known = errors.filter((e): e is number => e !== null).map(Math.abs);
  return known.length ? median(known) : null;
}

/**
 * The model with its CPU-bound stage times (compute and prep) scaled by k, the
 * control run's measured time against the predicted one. A machine whose CPU
 * speed moves between runs (a shared host: here a single-threaded loop ran at
 * two speeds 1.7x apart, each for 10-30 s) moves every CPU-bound stage alike;
 * storage is measured apart and left alone. Errors against this model are
 * those of the what-if's reasoning (cache, CPUs, overlap), with the job's
 * drift since profiling taken out.
 */
export function anchorToControl(model: FittedModel, k: number): FittedModel {
  return { ...model, computeSecPerIter: model.computeSecPerIter * k, prepCpuSecPerSample: model.prepCpuSecPerSample * k };
}

interface PointContext {
  input: ValidateInput;
  dataset: Dataset;
  samplesPerIter: number;
  interrupts: Interrupts;
  index: number;
}

interface PointOutcome {
  summary: IterationSummary | null;
  ranks: number;
  note: string;
  residentBytes: number | null;
  residency: ResidencyVerdict | null;
  affinity: AffinityVerdict | null;
  readBytesPerSample: number | null;
  failureTail: string | null;
}

async function measurePoint(point: ValidationPoint, ctx: PointContext): Promise<PointOutcome> {
  const { input, dataset } = ctx;
  const iterationsPerEpoch = Math.ceil(dataset.files.length / ctx.samplesPerIter);
  let job: { pid: number } | null = null;
  const common: Omit<ModeRunInput, 'mode' | 'cacheState' | 'wrapArgv' | 'modeDir'> = {
    argv: input.profile.command,
    cwd: input.cwd,
    env: input.env,
    dataset,
    precision: input.precision,
    minIterations: CONTROL_MIN_ITERATIONS,
    maxIterations: Math.max(CONTROL_MIN_ITERATIONS, input.maxIterations),
    timeoutSec: input.timeoutSec,
    firstIterationTimeoutSec: SUPERVISION.firstIterationTimeoutSec,
    stopGraceSec: SUPERVISION.stopGraceSec,
    killGraceSec: SUPERVISION.killGraceSec,
    sync: SUPERVISION.sync,
    pollMs: SUPERVISION.pollMs,
    onJobStarted: (started) => {
      job = started;
      ctx.interrupts.attach(started);
    },
    interrupted: () => ctx.interrupts.interrupted,
  };
  const label = point.kind === 'cache' ? `cache-${point.cacheBytes}` : point.kind === 'cpus' ? `cpus-${point.cpus}` : 'control';
  const modeDir = join(input.workDir, `point-${ctx.index + 1}-${label}`);

  if (point.kind !== 'cache') {
    const affinity = point.kind === 'cpus' ? withCpus(point.cpus, input.profile.command, input.env.PATH) : null;
    let verdict: AffinityVerdict | null = null;
    const result = await runMode({
      ...common,
      mode: 'cached',
      argv: affinity?.argv ?? input.profile.command,
      modeDir,
      wrapArgv: (argv) => argv,
      cacheState: new PageCacheState({ dropCaches: false, ...CACHE_STATE_SETTINGS }),
      onProgress: (progress) => {
        input.onProgress?.(ctx.index, { iterations: progress.iterations, elapsedSec: progress.elapsedSec, epoch: null, epochs: null, residentBytes: null });
        // Once the job iterates, its loader workers exist: every thread must be inside the mask.
        if (affinity && verdict === null && progress.iterations >= AFFINITY_CHECK_ITERATIONS && job) {
          const threads = threadAffinities(job.pid);
          if (threads.length > 0) verdict = judgeAffinity(threads, affinity.cpus);
        }
      },
    });
    if (affinity && verdict === null) verdict = { ...judgeAffinity([], affinity.cpus), example: 'the job ended before its threads could be checked' };
    const checked = verdict as AffinityVerdict | null;
    const where = affinity ? `on CPUs ${affinity.cpus.join(',')}` : 'at the profiled settings';
    const applied =
      checked === null ? '' : checked.held ? `; affinity held on all ${checked.threads} threads` : `; affinity NOT held: ${checked.outside} of ${checked.threads} threads outside (${checked.example})`;
    return {
      summary: result.status === 'ok' ? result.summary : null,
      ranks: Math.max(1, result.ranks.length),
      note: `cached mode ${where}: ${result.status} (${result.stopReason})${applied}`,
      residentBytes: null,
      residency: null,
      affinity: checked,
      readBytesPerSample: null,
      failureTail: failureTail(result),
    };
  }
  return measureCachePoint(point, ctx, common, modeDir, iterationsPerEpoch);
}

/** Iterations after which a CPU point's threads are checked (loader workers started). */
const AFFINITY_CHECK_ITERATIONS = 5;

/** Files of each group (held by the cap, not held) a residency reading reads at most; more are sampled. */
const RESIDENCY_SAMPLE_FILES = 512;
/** Least time between two residency readings. */
const READING_INTERVAL_MS = 250;
/** Largest share of the time the readings may take: a slow reading spaces the next ones out. */
const READING_DUTY_CYCLE = 0.02;

/**
 * One run of a cache point: the dataset evicted, then the job run with the
 * cap holding the dataset's page cache at the target (an LRU of the files it
 * closed). The first epoch fills the cache and is not measured; the epochs
 * after it are the model's steady state. Residency readings (mincore, through
 * the cap, sampled on large datasets) judge whether the target held.
 */
async function measureCachePoint(
  point: Extract<ValidationPoint, { kind: 'cache' }>,
  ctx: PointContext,
  common: Omit<ModeRunInput, 'mode' | 'cacheState' | 'wrapArgv' | 'modeDir'>,
  modeDir: string,
  iterationsPerEpoch: number,
): Promise<PointOutcome> {
  const { input, dataset } = ctx;
  // Storage as the profile saw it: its cold mode's throttle, when it had one.
  const throttleBps = input.profile.options.storageBwBytesPerSec;
  const group: JobCgroup | null =
    throttleBps && dataset.device
      ? createJobCgroup({ name: `validate-${process.pid}-${ctx.index}`, readBpsDevice: { device: dataset.device, bytesPerSec: throttleBps }, v2Parent: input.env.DSA_CGROUP_PARENT })
      : null;
  const cacheState = new CappedCacheState(point.cacheBytes);
  const readings: { iterations: number; residentBytes: number; exact: boolean }[] = [];
  let lastReadingAt = 0;
  let readingCostMs = 0;
  let lastResident: number | null = null;
  const epochs = input.epochs;
  try {
    const result = await runMode({
      ...common,
      mode: 'cold',
      minIterations: iterationsPerEpoch * epochs,
      maxIterations: iterationsPerEpoch * epochs * 3,
      modeDir,
      wrapArgv: (argv) => (group ? wrapCommand(group.procsFiles, argv) : argv),
      cacheState,
      onProgress: (progress) => {
        const now = Date.now();
        if (cacheState.capping && now - lastReadingAt >= Math.max(READING_INTERVAL_MS, readingCostMs / READING_DUTY_CYCLE)) {
          const reading = cacheState.readResidency(RESIDENCY_SAMPLE_FILES);
          readingCostMs = Date.now() - now;
          lastReadingAt = Date.now();
          if (reading) {
            readings.push({ iterations: progress.iterations, residentBytes: reading.residentBytes, exact: reading.exact });
            lastResident = reading.residentBytes;
          }
        }
        const epoch = Math.min(epochs, Math.floor(progress.iterations / iterationsPerEpoch) + 1);
        input.onProgress?.(ctx.index, { iterations: progress.iterations, elapsedSec: progress.elapsedSec, epoch, epochs, residentBytes: lastResident });
      },
    });
    const pace = result.ranks.find((r) => r.rank === result.paceRank) ?? result.ranks[0];
    const steady = pace ? pace.iterations.slice(iterationsPerEpoch) : [];
    const summary = result.status === 'ok' ? summarizeIterations(steady, { workers: pace?.workers ?? null }) : null;
    const window = readings.filter((r) => r.iterations >= iterationsPerEpoch);
    const verdict = judgeResidency(
      window.map((r) => r.residentBytes),
      point.cacheBytes,
      dataset.bytes,
    );
    const sampled = window.some((r) => !r.exact) ? ', sampled' : '';
    const held =
      verdict.meanBytes === null
        ? 'dataset residency not measured in the measured window: not held'
        : `dataset in page cache ${mib(verdict.minBytes!)}-${mib(verdict.maxBytes!)}, mean ${mib(verdict.meanBytes)} ` +
          `(mincore, ${verdict.readings} readings${sampled}, ${Math.round(verdict.inBandShare * 100)}% within ±${mib(verdict.toleranceBytes)}): ${verdict.held ? 'held' : 'NOT held'}`;
    return {
      summary,
      ranks: Math.max(1, result.ranks.length),
      note: `target ${mib(point.cacheBytes)}; ${held}; first epoch not measured; ${result.status} (${result.stopReason})`,
      residentBytes: verdict.meanBytes,
      residency: verdict,
      affinity: null,
      readBytesPerSample: windowRates(result.resources, steady, (r) => r.jobReadBytes)?.perSample ?? null,
      failureTail: failureTail(result),
    };
  } finally {
    await group?.remove().catch(() => undefined);
    // Every reading beside the job's logs: how the cache went, when it did not hold.
    mkdirSync(modeDir, { recursive: true });
    writeFileSync(join(modeDir, 'residency.jsonl'), readings.map((r) => JSON.stringify(r) + '\n').join(''));
  }
}

/** The end of a failed run's log, so the report can say why; null for a run that ended well. */
function failureTail(result: ModeResult): string | null {
  if (result.status === 'ok') return null;
  return tail(result.logs.stderr, 10) || tail(result.logs.stdout, 10) || null;
}

function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}
