// The nearest-rank quantile: the smallest value with at least a share p of
// the values at or below it. Every quantile the profile prints (file sizes,
// first bytes, request times) is one of the values measured, never an
// interpolation between two.

/** The nearest-rank p-quantile of `sorted` (ascending, not empty). */
export function nearestRank(sorted: ArrayLike<number>, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}
