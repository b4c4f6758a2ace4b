import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { summarizeIterations } from '../analysis/summarize.js';
import { windowRates } from '../profile/window-rates.js';
import { median } from '../analysis/stats.js';
import type { PreparedState, CacheState } from '../profile/cache-state.js';
import { PageCacheState } from '../profile/cache-state.js';
import { runMode, type ModeRunInput } from '../profile/run-mode.js';
import { Interrupts } from '../profile/interrupts.js';
import type { Profile, IterationSummary, ModeResult } from '../schema/profile.js';
import { tail } from '../profile/log-tail.js';
import { withCpus } from '../system/affinity.js';
import { createJobCgroup, wrapCommand } from '../system/cgroups.js';
import { listDataset, type Dataset } from '../system/dataset.js';
import { evict, residency } from '../system/page-cache.js';
import { baseScenario, fitModel, predict, type FittedModel, type Scenario } from '../whatif/model.js';
import { cgroupMemory, DatasetCacheCap, type CapStep } from './memory-limit.js';

/**
 * One point to check: a cache size, a CPU count, or the control (the profiled
 * settings again, which shows how far the job's pace moves between runs).
 */
export type ValidationPoint = { kind: 'cache'; cacheBytes: number; recommended?: boolean } | { kind: 'cpus'; cpus: number } | { kind: 'control' };

export interface ValidationResult {
  point: ValidationPoint;
  /** Predicted samples/s (steady state) at the point; for a cache point, at the cache the job really had. */
  predictedSamplesPerSec: number;
  /** Cache points: mean dataset bytes resident over the measured window (mincore), else null. */
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
  /** Median of |relativeError| over the points that ran, the control left out. */
  medianAbsError: number | null;
  /** |relativeError| of the control: the job's own run-to-run variation, which no model removes. */
  controlAbsError: number | null;
  /** Median of |anchoredError| over the points after the control. */
  anchoredMedianAbsError: number | null;
  /** Caveats of the model (assumed linear scaling, unproven modes). */
  modelCaveats: string[];
  /** Whether the model's overlap of reads and pre-processing was measured (σ fitted) or assumed. */
  overlapMeasured: boolean;
}

export interface ValidateInput {
  profile: Profile;
  points: ValidationPoint[];
  /** Epochs each cache point runs; the first (cold) is not measured. */
  epochs: number;
  /** Control and CPU points stop when the 95% CI of the iteration time is this tight (relative)... */
  precision: number;
  /** ...or after this many iterations. */
  maxIterations: number;
  cwd: string;
  workDir: string;
  timeoutSec: number;
  onPoint?: (point: ValidationPoint, index: number) => void;
  onSignal: (handler: () => void) => () => void;
}

/**
 * Runs the profiled job again at other cache sizes (a memory cgroup caps its
 * page cache) and CPU counts (affinity), and sets what it measures beside what
 * the what-if model predicts. The model is fitted on the profile alone, so
 * each point is a prediction of a run it has not seen.
 */
export async function runValidation(input: ValidateInput): Promise<ValidationReport> {
  const { profile } = input;
  // Fitted on the profile alone (its CPU sweep included, when it has one).
  const model = fitModel(profile);
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
      if (point.kind === 'control' && rate) anchoredModel = anchorToControl(model, predicted / rate);
      const halfWidth = measured.summary?.iterMs.halfWidth != null && rate !== null ? (rate * measured.summary.iterMs.halfWidth) / measured.summary.iterMs.mean : null;
      results.push({
        point,
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
    }
  } finally {
    interrupts.dispose();
  }
  const points = results.filter((r) => r.point.kind !== 'control');
  const control = results.find((r) => r.point.kind === 'control');
  return {
    results,
    interrupted: interrupts.interrupted,
    medianAbsError: medianAbs(points.map((r) => r.relativeError)),
    controlAbsError: control?.relativeError != null ? Math.abs(control.relativeError) : null,
    anchoredMedianAbsError: medianAbs(points.map((r) => r.anchoredError)),
    modelCaveats: model.caveats,
    overlapMeasured: model.overlapMeasured,
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

async function measurePoint(
  point: ValidationPoint,
  ctx: PointContext,
): Promise<{
  summary: IterationSummary | null;
  ranks: number;
  note: string;
  residentBytes: number | null;
  readBytesPerSample: number | null;
  failureTail: string | null;
}> {
  const { input, dataset } = ctx;
  const iterationsPerEpoch = Math.ceil(dataset.files.length / ctx.samplesPerIter);
  const common: Omit<ModeRunInput, 'mode' | 'cacheState' | 'wrapArgv' | 'modeDir'> = {
    argv: input.profile.command,
    cwd: input.cwd,
    dataset,
    precision: input.precision,
    minIterations: 60,
    maxIterations: Math.max(60, input.maxIterations),
    timeoutSec: input.timeoutSec,
    firstIterationTimeoutSec: 300,
    stopGraceSec: 30,
    killGraceSec: 10,
    sync: true,
    pollMs: 250,
    onJobStarted: (job) => ctx.interrupts.attach(job),
    interrupted: () => ctx.interrupts.interrupted,
  };
  const label = point.kind === 'cache' ? `cache-${point.cacheBytes}` : point.kind === 'cpus' ? `cpus-${point.cpus}` : 'control';
  const modeDir = join(input.workDir, `point-${ctx.index + 1}-${label}`);

  if (point.kind !== 'cache') {
    const affinity = point.kind === 'cpus' ? withCpus(point.cpus, input.profile.command) : null;
    const result = await runMode({
      ...common,
      mode: 'cached',
      argv: affinity?.argv ?? input.profile.command,
      modeDir,
      wrapArgv: (argv) => argv,
      cacheState: new PageCacheState({ dropCaches: false, coldKeeperIntervalMs: 100, warmConcurrency: 8 }),
    });
    const where = affinity ? `on CPUs ${affinity.cpus.join(',')}` : 'at the profiled settings';
    return {
      summary: result.status === 'ok' ? result.summary : null,
      ranks: Math.max(1, result.ranks.length),
      note: `cached mode ${where}: ${result.status} (${result.stopReason})`,
      residentBytes: null,
      readBytesPerSample: null,
      failureTail: failureTail(result),
    };
  }

  // Cache point: start cold, let the capped page cache fill over the first
  // epoch, and measure the epochs after it (the model's steady state).
  const first = await measureCachePoint(point, ctx, common, modeDir, iterationsPerEpoch, 0);
  if (first.outcome.failureTail === null || ctx.interrupts.interrupted) return first.outcome;
  if (!OUT_OF_MEMORY.test(first.outcome.failureTail) && !endedAtLimit(first.steps)) return first.outcome;
  // On cgroup v1 a job at the limit with nothing left to reclaim gets ENOMEM
  // from a read() (the paused-instead-of-killed behaviour covers page faults
  // only): a PyTorch job met it when its DataLoader forked new workers at an
  // epoch boundary, a jump of 25 MB between two polls. Retry once with room
  // for the largest jump the failed run showed, on top of the floor's own.
  const slack = Math.max(RETRY_MIN_SLACK_BYTES, largestGrowth(first.steps));
  const retry = await measureCachePoint(point, ctx, common, `${modeDir}-retry`, iterationsPerEpoch, slack);
  const why = `the first run failed at the limit (${lastLine(first.outcome.failureTail)}); retried with ${mib(slack)} more room`;
  return { ...retry.outcome, note: `${why}; ${retry.outcome.note}` };
}

/** Least extra room a retried cache point gets. */
const RETRY_MIN_SLACK_BYTES = 16 * 2 ** 20;

/** What a job prints when an allocation failed: Python, C++, errno. */
const OUT_OF_MEMORY = /Cannot allocate memory|ENOMEM|MemoryError|std::bad_alloc|out of memory/i;

/**
 * Whether the job's own memory (what cannot be reclaimed) reached the cap's
 * limit in its last steps: a failure there may be the cap's doing. Usage alone
 * sits at the limit whenever the capped cache is full, which is the cap working.
 */
export function endedAtLimit(steps: CapStep[]): boolean {
  // A step records what it read and the limit it then set: compare with the limit set one step before.
  for (let k = Math.max(1, steps.length - 3); k < steps.length; k++) {
    const limit = steps[k - 1].limitBytes;
    if (limit !== null && steps[k].ownBytes >= limit - AT_LIMIT_MARGIN_BYTES) return true;
  }
  return false;
}

/** Usage within this of the limit counts as at the limit. */
const AT_LIMIT_MARGIN_BYTES = 4 * 2 ** 20;

/** The largest growth of the job's own memory between two steps of the cap. */
export function largestGrowth(steps: CapStep[]): number {
  let largest = 0;
  for (let k = 1; k < steps.length; k++) largest = Math.max(largest, steps[k].ownBytes - steps[k - 1].ownBytes);
  return largest;
}

function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return lines[lines.length - 1].replace(/^\s*\|?\s*/, '').slice(0, 120);
}

type PointOutcome = Awaited<ReturnType<typeof measurePoint>>;

/** One run of a cache point: the job cold in a memory cgroup whose cap holds the dataset's cache at the target. */
async function measureCachePoint(
  point: Extract<ValidationPoint, { kind: 'cache' }>,
  ctx: PointContext,
  common: Omit<ModeRunInput, 'mode' | 'cacheState' | 'wrapArgv' | 'modeDir'>,
  modeDir: string,
  iterationsPerEpoch: number,
  extraSlackBytes: number,
): Promise<{ outcome: PointOutcome; steps: CapStep[] }> {
  const { input, dataset } = ctx;
  // Storage as the profile saw it: its cold mode's throttle, when it had one.
  const throttle = input.profile.options.storageBwBytesPerSec;
  const group = createJobCgroup({
    name: `validate-${process.pid}-${ctx.index}${extraSlackBytes > 0 ? '-retry' : ''}`,
    memoryLimitBytes: 2 ** 50,
    ...(throttle && dataset.device ? { readBpsDevice: { device: dataset.device, bytesPerSec: throttle } } : {}),
  });
  const cap = new DatasetCacheCap(cgroupMemory(group.dirs), dataset.files, point.cacheBytes, extraSlackBytes);
  try {
    const result = await runMode({
      ...common,
      mode: 'cold',
      minIterations: iterationsPerEpoch * input.epochs,
      maxIterations: iterationsPerEpoch * input.epochs * 3,
      modeDir,
      wrapArgv: (argv) => wrapCommand(group.procsFiles, argv),
      cacheState: coldStartState(),
      onProgress: (progress) => {
        // From the job's first iteration on, its own memory is known; follow it.
        if (progress.iterations >= 1) void cap.adjust(progress.iterations);
      },
    });
    const pace = result.ranks.find((r) => r.rank === result.paceRank) ?? result.ranks[0];
    const steady = pace ? pace.iterations.slice(iterationsPerEpoch) : [];
    const summary = result.status === 'ok' ? summarizeIterations(steady, { workers: pace?.workers ?? null }) : null;
    const resident = cap.residencyFrom(iterationsPerEpoch);
    const residentBytes = resident.length ? resident.reduce((a, b) => a + b, 0) / resident.length : null;
    const held =
      residentBytes === null
        ? 'dataset residency not measured in the measured window'
        : `dataset in page cache ${mib(Math.min(...resident))}-${mib(Math.max(...resident))}, mean ${mib(residentBytes)} (mincore, ${resident.length} readings)`;
    const outcome: PointOutcome = {
      summary,
      ranks: Math.max(1, result.ranks.length),
      note: `target ${mib(point.cacheBytes)}; ${held}; first epoch not measured; ${result.status} (${result.stopReason})`,
      residentBytes,
      readBytesPerSample: windowRates(result.resources, steady, (r) => r.jobReadBytes)?.perSample ?? null,
      failureTail: failureTail(result),
    };
    return { outcome, steps: cap.steps };
  } finally {
    await group.remove().catch(() => undefined);
    // Every step of the cap beside the job's logs: how the limit moved, and why, when the cache did not hold.
    mkdirSync(modeDir, { recursive: true });
    writeFileSync(join(modeDir, 'cache-cap.jsonl'), cap.steps.map((step) => JSON.stringify(step) + '\n').join(''));
  }
}

/** The end of a failed run's log, so the report can say why; null for a run that ended well. */
function failureTail(result: ModeResult): string | null {
  if (result.status === 'ok') return null;
  return tail(result.logs.stderr, 10) || tail(result.logs.stdout, 10) || null;
}

/** The dataset evicted once before the run and then left alone: the capped cache fills as it may. */
function coldStartState(): CacheState {
  return {
    async prepare(_mode, dataset): Promise<PreparedState> {
      await evict(dataset.files, { sync: true });
      const before = await residency(dataset.files);
      return { residentBytesBefore: before.residentBytes, finish: async () => ({}) };
    },
  };
}

function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}
