// What a validate run says: whether the model met its error target, whether the fetch stall is gone at the recommended
// cache, and whether the run itself ended well. Pure: judgements as data; report/validate-terminal.ts puts them in
// words.
import { combinedHalfWidth } from '../analysis/estimate.js';
import { ExitCode } from '../errors.js';
import { NEGLIGIBLE_FETCH_STALL } from '../whatif/model.js';
import type { ValidationReport, ValidationResult } from './results.js';

/** Target of the what-if model: median absolute error of the predictions. */
export const TARGET_MEDIAN_ERROR = 0.1;

/** The model's error against its target. */
export type ModelVerdict =
  /** Some point was measured, but none held its setting: nothing was tested. */
  | { kind: 'untested' }
  /** No point was measured at all. */
  | { kind: 'unmeasured' }
  | {
      /** Whether the median absolute error is within the target. */
      kind: 'within-target' | 'beyond-target';
      /** Median |relativeError| over the points that tested their setting. */
      medianAbsError: number;
      /** The target it is held to (TARGET_MEDIAN_ERROR). */
      targetAbsError: number;
    };

/** Points, the control left out, whose setting did not hold: their sizes or CPU counts were not tested. */
export function notHeldPoints(report: ValidationReport): ValidationResult[] {
  return report.results.filter((r) => r.point.kind !== 'control' && r.status === 'not-held');
}

/** The model's median absolute error against TARGET_MEDIAN_ERROR, or why there is none. */
export function modelVerdict(report: ValidationReport): ModelVerdict {
  const median = report.medianAbsError;
  if (median === null) return notHeldPoints(report).length ? { kind: 'untested' } : { kind: 'unmeasured' };
  return {
    kind: median <= TARGET_MEDIAN_ERROR ? 'within-target' : 'beyond-target',
    medianAbsError: median,
    targetAbsError: TARGET_MEDIAN_ERROR,
  };
}

/** The recommended cache point's rate beside the control's, both measured. */
export interface RecommendedRates {
  /** The recommended cache, bytes. */
  cacheBytes: number;
  /** Measured samples/s at the recommended cache. */
  samplesPerSec: number;
  /** Measured samples/s of the control: everything cached, no fetch stall. */
  controlSamplesPerSec: number;
}

/** Whether the fetch stall is gone at the recommended cache. */
export type RecommendationVerdict =
  /** The recommended point was measured, the control was not (or did not run). */
  | { kind: 'no-control' }
  | (RecommendedRates & {
      /** Slower than the control by no more than the noise. */
      kind: 'gone-within-noise';
      /** The noise: both runs' 95% half-widths and the run-to-run variation, combined, samples/s. */
      noiseSamplesPerSec: number;
      /** The run-to-run variation in the noise, as the control's |error|; null when it added nothing. */
      runToRunShare: number | null;
    })
  | (RecommendedRates & {
      /** Slower beyond noise, but by less than the model counts as a fetch stall. */
      kind: 'gone-negligible';
      /** How much slower than the control, a share of the control's rate. */
      slowerShare: number;
      /** The share the model counts as no stall (NEGLIGIBLE_FETCH_STALL). */
      negligibleShare: number;
    })
  | (RecommendedRates & {
      /** Slower beyond noise and beyond the negligible share. */
      kind: 'not-gone';
      /** How much slower than the control, a share of the control's rate. */
      slowerShare: number;
      /**
       * Hit ratios when the cache hit as often as predicted (or more), so the misses' timing is what is left; else
       * null.
       */
      heldHitRatios: { measured: number; predicted: number } | null;
      /** Whether the profile measured the overlap of reads and pre-processing (else the model assumed it). */
      overlapMeasured: boolean;
    });

/** Hit ratios this close below the prediction still count as hitting as predicted. */
const HIT_RATIO_SLACK = 0.02;

/**
 * Whether the fetch stall is gone at the recommended cache: its measured rate against the control's (everything cached,
 * no fetch stall), within noise: both runs' 95% half-widths and the run-to-run variation the control showed against the
 * profile, combined. A residue beyond noise but under 2% is what the recommendation aims for (recommend.ts), so it
 * counts as gone and says so. Null when no recommended cache point was measured.
 */
export function recommendationVerdict(report: ValidationReport): RecommendationVerdict | null {
  const point = report.results.find((r) => r.point.kind === 'cache' && r.point.recommended);
  const control = report.results.find((r) => r.point.kind === 'control');
  if (point?.point.kind !== 'cache' || point.measuredSamplesPerSec === null) return null;
  if (!control || control.measuredSamplesPerSec === null) return { kind: 'no-control' };
  const rates: RecommendedRates = {
    cacheBytes: point.point.cacheBytes,
    samplesPerSec: point.measuredSamplesPerSec,
    controlSamplesPerSec: control.measuredSamplesPerSec,
  };
  const gap = control.measuredSamplesPerSec - point.measuredSamplesPerSec;
  const runToRun = (report.controlAbsError ?? 0) * control.measuredSamplesPerSec;
  const noise = combinedHalfWidth(point.measuredHalfWidth ?? 0, control.measuredHalfWidth ?? 0, runToRun);
  const slower = gap / control.measuredSamplesPerSec;
  if (gap <= noise) {
    return {
      ...rates,
      kind: 'gone-within-noise',
      noiseSamplesPerSec: noise,
      runToRunShare: runToRun > 0 ? report.controlAbsError : null,
    };
  }
  if (slower <= NEGLIGIBLE_FETCH_STALL)
    return { ...rates, kind: 'gone-negligible', slowerShare: slower, negligibleShare: NEGLIGIBLE_FETCH_STALL };
  // Hits as predicted (or more) yet slower: what the epoch-mean model leaves out is when the reads happen.
  const hitsHeld =
    point.measuredHitRatio !== null &&
    point.predictedHitRatio !== null &&
    point.measuredHitRatio >= point.predictedHitRatio - HIT_RATIO_SLACK;
  return {
    ...rates,
    kind: 'not-gone',
    slowerShare: slower,
    heldHitRatios: hitsHeld ? { measured: point.measuredHitRatio!, predicted: point.predictedHitRatio! } : null,
    overlapMeasured: report.overlapMeasured,
  };
}

/** Why a validate run did not end well; its exit code goes with it. */
export type ValidationFailure =
  | {
      /** The job failed at every point: nothing was measured. */
      kind: 'job-failed';
      /** The exit code that says so. */
      exitCode: ExitCode.JobFailed;
    }
  | {
      /** Ctrl-C stopped the run. */
      kind: 'interrupted';
      /** The exit code that says so. */
      exitCode: ExitCode.Interrupted;
      /** Points completed before it (the report shows them). */
      completed: number;
      /** Points the run set out to run. */
      planned: number;
    };

/** How the run ended, when not well; null when it did. `planned` is the number of points it set out to run. */
export function validationFailure(report: ValidationReport, planned: number): ValidationFailure | null {
  if (
    !report.interrupted &&
    report.results.length > 0 &&
    report.results.every((r) => r.measuredSamplesPerSec === null)
  ) {
    return { kind: 'job-failed', exitCode: ExitCode.JobFailed };
  }
  if (report.interrupted)
    return { kind: 'interrupted', exitCode: ExitCode.Interrupted, completed: report.results.length, planned };
  return null;
}
