/**
 * Arithmetic on estimates (a mean with its 95% confidence half-width), shared by the differential split, compare, gate,
 * the what-if fit and validate: the difference of two independent measurements, and whether a figure lies beyond its
 * noise.
 */
import type { Estimate } from '../schema/profile.js';
import { batchMeans } from './stats.js';

/**
 * A stall is named only when its 95% interval clears zero by this share of the iteration time. The profiler may itself
 * take up to 2% of one CPU in a mode (keeping the dataset cold, sampling); on a job whose pace is set by a saturated
 * CPU that can lengthen the iteration by as much, so a stall that does not clear it could be the profiler's own
 * footprint (docs/method.md, "When a stall is named").
 */
export const NAMING_MARGIN = 0.02;

/**
 * 95% half-width of a sum or difference of independent estimates: their variances add, so the half-widths combine as
 * the root of the sum of squares. Null when any of them is unknown; a caller that would rather count a missing interval
 * as exact passes `halfWidth ?? 0`.
 */
export function combinedHalfWidth(...halfWidths: number[]): number;
export function combinedHalfWidth(...halfWidths: (number | null)[]): number | null;
export function combinedHalfWidth(...halfWidths: (number | null)[]): number | null {
  return halfWidths.some((h) => h === null) ? null : Math.hypot(...(halfWidths as number[]));
}

/** Mean of independent values with its 95% t-interval (batch means, blocks of one); no interval for fewer than two. */
export function estimateOf(values: readonly number[], proven = true): Estimate {
  const { mean, halfWidth } = batchMeans(values, 1);
  return { mean, halfWidth, proven };
}

/** after - before of two independent runs, not clamped, with the combined half-width; proven when both are. */
export function difference(after: Estimate, before: Estimate): Estimate {
  return {
    mean: after.mean - before.mean,
    halfWidth: combinedHalfWidth(before.halfWidth, after.halfWidth),
    proven: before.proven && after.proven,
  };
}

/**
 * Whether the estimate's 95% interval lies wholly above `floor`: its lower end clears it. Without an interval the mean
 * must. With floor 0 this is "beyond noise, upwards", the test every stall and slow-down is put to.
 */
export function liesAbove(e: Estimate, floor = 0): boolean {
  return e.mean - (e.halfWidth ?? 0) > floor;
}

/** Whether the interval excludes 0 on either side: a change beyond noise, up or down. */
export function excludesZero(e: Estimate): boolean {
  return liesAbove(e) || liesAbove({ ...e, mean: -e.mean });
}
