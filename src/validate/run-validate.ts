import { join } from 'node:path';
import { summarizeIterations } from '../analysis/summarize.js';
import { median } from '../analysis/stats.js';
import { ExitCode, UserError } from '../errors.js';
import type { PreparedState, CacheState } from '../profile/cache-state.js';
import { PageCacheState } from '../profile/cache-state.js';
import { runMode, type ModeRunInput } from '../profile/run-mode.js';
import { Interrupts } from '../profile/interrupts.js';
import type { Profile, IterationSummary } from '../schema/profile.js';
import { withCpus } from '../system/affinity.js';
import { createJobCgroup, wrapCommand } from '../system/cgroups.js';
import { listDataset, type Dataset } from '../system/dataset.js';
import { evict, residency } from '../system/page-cache.js';
import { baseScenario, fitModel, predict, type Scenario } from '../whatif/model.js';
import { capPageCache } from './memory-limit.js';

/** One point to check: a cache size or a CPU count. */
export type ValidationPoint = { kind: 'cache'; cacheBytes: number } | { kind: 'cpus'; cpus: number };

export interface ValidationResult {
  point: ValidationPoint;
  /** Predicted samples/s (steady state) at the point. */
  predictedSamplesPerSec: number;
  /** Predicted samples/s at the top of the cache the cap may have allowed (cache points), else the same. */
  predictedHighSamplesPerSec: number;
  /** Measured samples/s over the steady window, or null when the run failed. */
  measuredSamplesPerSec: number | null;
  /** 95% half-width of the measured rate, samples/s. */
  measuredHalfWidth: number | null;
  /** (predicted - measured) / measured, from the nearer end of the predicted range; 0 inside it. */
  relativeError: number | null;
  /** What happened, in a few words (failed runs, the cap applied). */
  note: string;
}

export interface ValidationReport {
  results: ValidationResult[];
  /** Median of |relativeError| over the points that ran. */
  medianAbsError: number | null;
  /** Caveats of the model (assumed linear scaling, unproven modes). */
  modelCaveats: string[];
}

export interface ValidateInput {
  profile: Profile;
  points: ValidationPoint[];
  /** Epochs each cache point runs; the first (cold) is not measured. */
  epochs: number;
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
  try {
    for (const [index, point] of input.points.entries()) {
      if (interrupts.interrupted) break;
      input.onPoint?.(point, index);
      const scenario: Scenario =
        point.kind === 'cache'
          ? { ...base, cacheBytes: point.cacheBytes, cachePolicy: 'page-cache', epochs: null }
          : { ...base, cacheBytes: dataset.bytes, cpus: point.cpus, epochs: null };
      const measured = await measurePoint(point, { input, dataset, samplesPerIter, interrupts, index });
      const predicted = predict(model, scenario).samplesPerSec;
      const predictedHigh = predict(model, { ...scenario, cacheBytes: scenario.cacheBytes + measured.extraCacheBytes }).samplesPerSec;
      const rate = measured.summary ? measured.summary.samplesPerSec * measured.ranks : null;
      const halfWidth = measured.summary?.iterMs.halfWidth != null && rate !== null ? (rate * measured.summary.iterMs.halfWidth) / measured.summary.iterMs.mean : null;
      results.push({
        point,
        predictedSamplesPerSec: predicted,
        predictedHighSamplesPerSec: predictedHigh,
        measuredSamplesPerSec: rate,
        measuredHalfWidth: halfWidth,
        relativeError: rate ? rangeError(predicted, predictedHigh, rate) : null,
        note: measured.note,
      });
    }
  } finally {
    interrupts.dispose();
  }
  if (interrupts.interrupted) throw new UserError('interrupted: validation stopped before all points ran', ExitCode.Interrupted);
  const errors = results.map((r) => r.relativeError).filter((e): e is number => e !== null).map(Math.abs);
  return { results, medianAbsError: errors.length ? median(errors) : null, modelCaveats: model.caveats };
}

/** Relative error of a measured rate against a predicted range: 0 inside it. */
export function rangeError(low: number, high: number, measured: number): number {
  const [lo, hi] = low <= high ? [low, high] : [high, low];
  if (measured >= lo && measured <= hi) return 0;
  return ((measured < lo ? lo : hi) - measured) / measured;
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
): Promise<{ summary: IterationSummary | null; ranks: number; note: string; extraCacheBytes: number }> {
  const { input, dataset } = ctx;
  const iterationsPerEpoch = Math.ceil(dataset.files.length / ctx.samplesPerIter);
  const common: Omit<ModeRunInput, 'mode' | 'cacheState' | 'wrapArgv' | 'modeDir'> = {
    argv: input.profile.command,
    cwd: input.cwd,
    dataset,
    precision: 0.03,
    minIterations: 60,
    maxIterations: 4000,
    timeoutSec: input.timeoutSec,
    firstIterationTimeoutSec: 300,
    stopGraceSec: 30,
    killGraceSec: 10,
    sync: true,
    pollMs: 250,
    onJobStarted: (job) => ctx.interrupts.attach(job),
    interrupted: () => ctx.interrupts.interrupted,
  };
  const modeDir = join(input.workDir, `point-${ctx.index + 1}-${point.kind === 'cache' ? `cache-${point.cacheBytes}` : `cpus-${point.cpus}`}`);

  if (point.kind === 'cpus') {
    const affinity = withCpus(point.cpus, input.profile.command);
    const result = await runMode({
      ...common,
      mode: 'cached',
      argv: affinity.argv,
      modeDir,
      wrapArgv: (argv) => argv,
      cacheState: new PageCacheState({ dropCaches: false, coldKeeperIntervalMs: 100, warmConcurrency: 8 }),
    });
    return {
      summary: result.status === 'ok' ? result.summary : null,
      ranks: Math.max(1, result.ranks.length),
      note: `cached mode on CPUs ${affinity.cpus.join(',')}: ${result.status} (${result.stopReason})`,
      extraCacheBytes: 0,
    };
  }

  // Cache point: start cold, let the capped page cache fill over the first
  // epoch, and measure the epochs after it (the model's steady state).
  // Storage as the profile saw it: its cold mode's throttle, when it had one.
  const throttle = input.profile.options.storageBwBytesPerSec;
  const group = createJobCgroup({
    name: `validate-${process.pid}-${ctx.index}`,
    memoryLimitBytes: 2 ** 50,
    ...(throttle && dataset.device ? { readBpsDevice: { device: dataset.device, bytesPerSec: throttle } } : {}),
  });
  let cap: ReturnType<typeof capPageCache> | null = null;
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
        // From the job's first iterations on, its own memory is known; follow it.
        if (progress.iterations >= 1) cap = capPageCache(group.dirs, point.cacheBytes, cap?.nonCacheBytes ?? 0);
      },
    });
    const pace = result.ranks.find((r) => r.rank === result.paceRank) ?? result.ranks[0];
    const steady = pace ? pace.iterations.slice(iterationsPerEpoch) : [];
    const summary = result.status === 'ok' ? summarizeIterations(steady, { workers: pace?.workers ?? null }) : null;
    const applied = cap as ReturnType<typeof capPageCache> | null;
    const capText = applied
      ? `page cache capped at ${mib(point.cacheBytes)}-${mib(point.cacheBytes + applied.headroomBytes)} (headroom for the job's own memory)`
      : 'cap never applied';
    return {
      summary,
      ranks: Math.max(1, result.ranks.length),
      note: `${capText}; first epoch not measured; ${result.status} (${result.stopReason})`,
      extraCacheBytes: applied?.headroomBytes ?? 0,
    };
  } finally {
    await group.remove().catch(() => undefined);
  }
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
