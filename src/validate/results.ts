// What validate measured against what the model predicted, point by point, and the errors over the points: the data of
// a validate run, pure, which the verdict (verdict.ts) and the renderers read.
import { median } from '../analysis/stats.js';
import type { FittedModel } from '../whatif/model.js';
import type { AffinityVerdict, ResidencyVerdict } from './held.js';
import type { ValidationPoint } from './point-kinds.js';

/**
 * What a point's run amounts to: 'measured' tested the setting it asked for; 'not-held' ran, but its cache or CPU
 * setting did not hold, so it tested another one (kept, left out of the model's error); 'failed' measured nothing.
 */
export type PointStatus = 'measured' | 'not-held' | 'failed';

/** One point's prediction against its measurement. */
export interface ValidationResult {
  /** The point: a cache size, a CPU count or the control. */
  point: ValidationPoint;
  /** Whether the point tested what it asked for (see PointStatus). */
  status: PointStatus;
  /** Cache points: how the dataset's residency went against the target over the measured window, else null. */
  residency: ResidencyVerdict | null;
  /** CPU points: whether the affinity reached every thread of the job, else null. */
  affinity: AffinityVerdict | null;
  /** Predicted samples/s (steady state) at the point; for a cache point, at the cache the job really had. */
  predictedSamplesPerSec: number;
  /**
   * Cache points: mean dataset bytes resident over the measured window (mincore, sampled on large datasets), else null.
   */
  residentBytes: number | null;
  /** Cache points: the model's steady hit ratio at residentBytes, else null. */
  predictedHitRatio: number | null;
  /**
   * Cache points: 1 - storage bytes the job read per sample over the measured window / (bytes per sample x read
   * amplification), else null. Set beside predictedHitRatio, it tells a wrong hit ratio from a wrong overlap of fetch
   * with the rest.
   */
  measuredHitRatio: number | null;
  /**
   * Cache points: the model's samples/s at the measured hit ratio instead of its policy's, else null. The error splits
   * in two at it: the policy's (predicted - this) and the rest of the model's (this - measured).
   */
  atMeasuredHitSamplesPerSec: number | null;
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
  /**
   * Cold points (bandwidth, latency): seconds from the job's start to its first batch, predicted and measured; absent
   * elsewhere.
   */
  firstBatchSec?: { predicted: number; measured: number };
  /** Write points: the checkpoint stall and the iteration time, predicted and measured; absent elsewhere. */
  checkpoint?: CheckpointCheck;
}

/** A write point's checkpoint stall and iteration time against whatif --write-bw's prediction. */
export interface CheckpointCheck {
  /** The disks whose writes were held to the point's rate, as 'name (major:minor)'. */
  devices: string[];
  /** The cgroup hierarchy of the throttle: on v1 the kernel's background writeback is not held. */
  cgroup: 'v1' | 'v2';
  /** Whether the profiled saves synced (fsync) before returning. */
  synced: boolean;
  /** Saves the point's run made. */
  saves: number;
  /** Predicted blocking time of one save, ms. */
  predictedPerSaveMs: number;
  /** Mean blocking time of the run's saves, ms; null when it made none. */
  measuredPerSaveMs: number | null;
  /** Predicted checkpoint stall per iteration, ms. */
  predictedStallMsPerIter: number;
  /** The run's checkpoint stall per iteration from its own save events, ms; null when it made none. */
  measuredStallMsPerIter: number | null;
  /** Predicted iteration time, saves and epoch starts included, ms. */
  predictedIterMs: number;
  /** The run's mean iteration time over its measured window, ms; null when it failed. */
  measuredIterMs: number | null;
  /**
   * Whether the stall is within 15% of the measured one, or 3% of the iteration (write-point.ts); null without a
   * measurement.
   */
  stallWithinTolerance: boolean | null;
  /** What the throttle could not hold, in words (buffered saves on cgroup v1), or null. */
  caveat: string | null;
}

/** A validate run: every point's result and the errors over them. */
export interface ValidationReport {
  /** One result per point run, in run order (the control first). */
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
  /** Points asked for but not run here (cache points where the page cache cannot be capped). */
  notRun: ValidationPoint[];
}

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
