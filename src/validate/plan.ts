// How long each validate point should take, before it starts (issue 13, item 3).
//
// From the profile alone: the what-if model's rates (the first epoch of a cache point is cold, the rest at the target's
// steady hit ratio), the epochs a cache point runs, the iterations a control or CPU point took to reach its precision
// when the profile measured the cached mode, and the job's start-up (the cached mode's wall time beyond its
// iterations).
import type { Profile } from '../schema/profile.js';
import { baseScenario, predict, type FittedModel } from '../whatif/model.js';
import { CACHE_POINT_EPOCHS_BUDGET, CONTROL_MIN_ITERATIONS } from '../profile/run-defaults.js';
import { writePrediction } from './write-point.js';
import { pointKind, pointScenario, type ValidationPoint } from './point-kinds.js';

/** One point of the plan. */
export interface PlannedPoint {
  point: ValidationPoint;
  /** Iterations it is expected to run (the pace-setting rank's). */
  iterations: number;
  /** Iterations it may run when its precision needs more than `iterations`: its budget. */
  maxIterations: number;
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
  const controlIterations = Math.min(
    Math.max(CONTROL_MIN_ITERATIONS, options.maxIterations),
    Math.max(CONTROL_MIN_ITERATIONS, measured),
  );
  return points.map((point) => {
    if (pointKind(point).runs === 'epochs') {
      const at = pointScenario(base, point, model.datasetBytes);
      const cold = predict(model, { ...at, cacheBytes: 0 }).samplesPerSec;
      const steady = predict(model, at).samplesPerSec;
      // A cache point may run past its epochs to this budget when its precision needs them (measure-point.ts runs it).
      const most = CACHE_POINT_EPOCHS_BUDGET * options.epochs;
      return {
        point,
        iterations: iterationsPerEpoch * options.epochs,
        maxIterations: iterationsPerEpoch * most,
        estimatedSec: start + epochSec(cold) + (options.epochs - 1) * epochSec(steady),
        maxSec: start + epochSec(cold) + (most - 1) * epochSec(steady),
      };
    }
    const steady = predict(model, pointScenario(base, point, model.datasetBytes));
    // A write point's iterations carry its saves at the throttled rate.
    const rate =
      (point.kind === 'write' ? writePrediction(profile, steady, point.bytesPerSec)?.samplesPerSec : undefined) ??
      steady.samplesPerSec;
    const iterSec = rate > 0 ? (options.samplesPerIter * ranks) / rate : 0;
    const budget = Math.max(CONTROL_MIN_ITERATIONS, options.maxIterations);
    return {
      point,
      iterations: controlIterations,
      maxIterations: budget,
      estimatedSec: start + controlIterations * iterSec,
      maxSec: start + budget * iterSec,
    };
  });
}
