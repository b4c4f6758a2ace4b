// What validate measured against what the model predicted, point by point, and the errors over the points: the data of
// a validate run, pure, which the verdict (verdict.ts) and the renderers read.
import { median } from '../analysis/stats.js';
import type { FittedModel } from '../whatif/model.js';
import type { z } from 'zod';
import type { ValidateOutputBody, ValidationResultSchema } from '../schema/validate-output.js';
import type { AffinityVerdict, ResidencyVerdict } from './held.js';

/**
 * What a point's run amounts to: 'measured' tested the setting it asked for; 'not-held' ran, but its cache or CPU
 * setting did not hold, so it tested another one (kept, left out of the model's error); 'failed' measured nothing.
 */
export type PointStatus = ValidationResult['status'];

/** One point's prediction against its measurement (docs/json-output.md). */
export type ValidationResult = z.infer<typeof ValidationResultSchema>;

/** A write point's checkpoint stall and iteration time against whatif --write-bw's prediction. */
export type CheckpointCheck = NonNullable<ValidationResult['checkpoint']>;

/** A validate run: every point's result and the errors over them. */
export type ValidationReport = Omit<ValidateOutputBody, 'profile'>;

/**
 * A cache point's error split: the policy's (its hit ratio against the measured one) and the rest of the model's, each
 * over the measured rate; null where not both are known.
 */
export function errorSplit(r: ValidationResult): { policy: number; rest: number } | null {
  if (r.atMeasuredHitSamplesPerSec === null || !r.measuredSamplesPerSec) return null;
  return {
    policy: (r.predictedSamplesPerSec - r.atMeasuredHitSamplesPerSec) / r.measuredSamplesPerSec,
    rest: (r.atMeasuredHitSamplesPerSec - r.measuredSamplesPerSec) / r.measuredSamplesPerSec,
  };
}

/** A point's status from its measured rate and whether its cache and CPU settings held. */
export function pointStatus(
  rate: number | null,
  residency: ResidencyVerdict | null,
  affinity: AffinityVerdict | null,
  settingHeld: boolean | null = null,
): PointStatus {
  if (rate === null) return 'failed';
  return (residency?.held ?? true) && (affinity?.held ?? true) && (settingHeld ?? true) ? 'measured' : 'not-held';
}

/**
 * The model's errors over the points that tested their setting: a point not held tested another setting, so it says
 * nothing of the model's error and is left out (and counted).
 */
export function errorSummary(
  results: readonly ValidationResult[],
): Pick<ValidationReport, 'medianAbsError' | 'notHeld' | 'controlAbsError' | 'anchoredMedianAbsError'> {
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
 * The model with its CPU-bound stage times (compute and prep) scaled by k, the control run's measured time against the
 * predicted one. A machine whose CPU speed moves between runs (a shared host: here a single-threaded loop ran at two
 * speeds 1.7x apart, each for 10-30 s) moves every CPU-bound stage alike; storage is measured apart and left alone.
 * Errors against this model are those of the what-if's reasoning (cache, CPUs, overlap), with the job's drift since
 * profiling taken out.
 */
export function anchorToControl(model: FittedModel, k: number): FittedModel {
  return {
    ...model,
    computeSecPerIter: model.computeSecPerIter * k,
    prepCpuSecPerSample: model.prepCpuSecPerSample * k,
    // The step's own CPU, taking a ready batch, the step's slow-down beside the loader and loading in series are CPU
    // work too.
    stepCpuSecPerSample: model.stepCpuSecPerSample * k,
    handoverSecPerIter: model.handoverSecPerIter * k,
    contentionSecPerIter: model.contentionSecPerIter * k,
    serialPrepSecPerSample: model.serialPrepSecPerSample === null ? null : model.serialPrepSecPerSample * k,
  };
}
