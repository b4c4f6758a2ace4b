/**
 * Whether a change between two measured figures is beyond their noise. Both figures carry 95% confidence half-widths
 * from independent runs; the half-width of their difference is the root sum of squares (analysis/estimate.ts, as for
 * the stalls). A change is real when its interval excludes 0.
 */
import { difference, excludesZero } from '../analysis/estimate.js';
import type { z } from 'zod';
import type { ChangeSchema } from '../schema/compare-output.js';
import type { Estimate } from '../schema/profile.js';

/** The change from `before` to `after`, with its noise (the contract: schema/compare-output.ts). */
export type Change = z.infer<typeof ChangeSchema>;

/** The change between two estimates, judged against the noise of both. */
export function changeBetween(before: Estimate, after: Estimate): Change {
  const change = difference(after, before);
  const delta = change.mean;
  const deltaHalfWidth = change.halfWidth;
  const relative = before.mean !== 0 ? delta / before.mean : null;
  const relativeHalfWidth =
    relative !== null && deltaHalfWidth !== null ? deltaHalfWidth / Math.abs(before.mean) : null;
  const noise = deltaHalfWidth === null ? 'unknown' : excludesZero(change) ? 'beyond' : 'within';
  return { delta, deltaHalfWidth, relative, relativeHalfWidth, noise, proven: change.proven };
}

/**
 * A rate (samples/s) as an estimate, from the iteration time it derives from: the relative half-width carries over to
 * first order (delta method).
 */
export function rateEstimate(samplesPerSec: number, iterMs: Estimate): Estimate {
  const relative = iterMs.halfWidth !== null && iterMs.mean > 0 ? iterMs.halfWidth / iterMs.mean : null;
  return { mean: samplesPerSec, halfWidth: relative === null ? null : samplesPerSec * relative, proven: iterMs.proven };
}

/** An estimate over a constant: a share of the iteration time, a figure per sample. */
export function dividedBy(e: Estimate, by: number): Estimate {
  return { ...e, mean: e.mean / by, halfWidth: e.halfWidth === null ? null : e.halfWidth / by };
}
