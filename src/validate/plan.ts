// How long each validate point should take, before it starts (issue 13, item 3).
//
// From the profile alone: the what-if model's rates (the first epoch of a
// cache point is cold, the rest at the target's steady hit ratio), the epochs
// a cache point runs, the iterations a control or CPU point took to reach its
// precision when the profile measured the cached mode, and the job's start-up
// (the cached mode's wall time beyond its iterations).
import type { Profile } from '../schema/profile.js';
import { baseScenario, predict, type FittedModel, type Scenario } from '../whatif/model.js';
import { CONTROL_MIN_ITERATIONS } from '../profile/run-defaults.js';
import { writePrediction } from './write-point.js';

/**
 * One point to check: a cache size, a CPU count, or the control (the profiled
 * settings again, which shows how far the job's pace moves between runs).
 */
export type ValidationPoint =
  | { kind: 'cache'; cacheBytes: number; recommended?: boolean; cpus?: number }
  | { kind: 'cpus'; cpus: number }
  | { kind: 'workers'; workers: number }
  | { kind: 'bandwidth'; bytesPerSec: number }
  | { kind: 'latency'; latencySec: number }
  | { kind: 'write'; bytesPerSec: number }
  | { kind: 'control' };

/** The scenario a non-cache point runs: the whole dataset cached, at its CPUs or loader workers (a write point as profiled, its saves added by writePrediction); a bandwidth point nothing cached. */
export function pointScenario(base: Scenario, point: Exclude<ValidationPoint, { kind: 'cache' }>, datasetBytes: number): Scenario {
  // A bandwidth point runs cold: nothing cached, every read at the bandwidth.
  if (point.kind === 'bandwidth') return { ...base, cacheBytes: 0, epochs: null, storageBytesPerSec: point.bytesPerSec };
  // A latency point runs cold too, every request waiting that long for its first byte.
  if (point.kind === 'latency') return { ...base, cacheBytes: 0, epochs: null, requestLatencySec: point.latencySec };
  const cached = { ...base, cacheBytes: datasetBytes, epochs: null };
  if (point.kind === 'cpus') return { ...cached, cpus: point.cpus };
  if (point.kind === 'workers') return { ...cached, workers: point.workers };
  return cached;
}

/** The scenario a cache point runs: its cache held by the page cache's LRU, at its CPUs where it names them (a cell of whatif --matrix). */
export function cacheScenario(base: Scenario, point: Extract<ValidationPoint, { kind: 'cache' }>): Scenario {
  return { ...base, cacheBytes: point.cacheBytes, cachePolicy: 'page-cache', epochs: null, ...(point.cpus !== undefined ? { cpus: point.cpus } : {}) };
}

/** One point of the plan. */
export interface PlannedPoint {
  point: ValidationPoint;
  /** Iterations it is expected to run (the pace-setting rank's). */
  iterations: number;
  /** Expected wall time, s: start-up plus iterations at the predicted rates. */
  estimatedSec: number;
  /** Wall time if the point runs to its iteration budget (its precision not reached before), s. */
  maxSec: number;
}

/** Seconds from the job's start to its first iteration, as the profile's cached mode saw it. */
function startupSec(profile: Profile): number {
  const cached = profile.modes.cached;
  if (!cached?.summary) return 0;
  const count = (cached.ranks.find((r) => r.rank === cached.paceRank) ?? cached.ranks[0])?.iterations.length ?? 0;
  // A pooled mode's wall time and iterations are its runs' together: the start-up of one run is their share.
  const runs = cached.passes?.length ?? 1;
  return Math.max(0, (cached.wallSec - (count * cached.summary.iterMs.mean) / 1000) / runs);
}

/** The plan: each point's iterations and estimated time. */
export function planValidation(
  profile: Profile,
  model: FittedModel,
  points: readonly ValidationPoint[],
  options: { epochs: number; maxIterations: number; datasetFiles: number; samplesPerIter: number },
): PlannedPoint[] {
  const base = { ...baseScenario(model), epochs: null };
  const ranks = Math.max(1, profile.modes.cached?.ranks.length ?? 1);
  const start = startupSec(profile);
  const iterationsPerEpoch = Math.ceil(options.datasetFiles / options.samplesPerIter);
  // Whole-job samples per second; one sample is one file of the dataset.
  const epochSec = (rate: number): number => (rate > 0 ? options.datasetFiles / rate : 0);
  const measured = profile.modes.cached?.summary?.measuredIterations ?? CONTROL_MIN_ITERATIONS;
  const controlIterations = Math.min(Math.max(CONTROL_MIN_ITERATIONS, options.maxIterations), Math.max(CONTROL_MIN_ITERATIONS, measured));
  return points.map((point) => {
    if (point.kind === 'cache') {
      const at = cacheScenario(base, point);
      const cold = predict(model, { ...at, cacheBytes: 0 }).samplesPerSec;
      const steady = predict(model, at).samplesPerSec;
      // run-validate.ts lets a cache point run to 3x its epochs when its precision needs them.
      return {
        point,
        iterations: iterationsPerEpoch * options.epochs,
        estimatedSec: start + epochSec(cold) + (options.epochs - 1) * epochSec(steady),
        maxSec: start + epochSec(cold) + (3 * options.epochs - 1) * epochSec(steady),
      };
    }
    const steady = predict(model, pointScenario(base, point, model.datasetBytes));
    // A write point's iterations carry its saves at the throttled rate.
    const rate = (point.kind === 'write' ? writePrediction(profile, steady, point.bytesPerSec)?.samplesPerSec : undefined) ?? steady.samplesPerSec;
    const iterSec = rate > 0 ? (options.samplesPerIter * ranks) / rate : 0;
    const budget = Math.max(CONTROL_MIN_ITERATIONS, options.maxIterations);
    return { point, iterations: controlIterations, estimatedSec: start + controlIterations * iterSec, maxSec: start + budget * iterSec };
  });
}
