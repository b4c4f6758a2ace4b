// The nearest-rank quantile: the smallest value with at least a share p of the values at or below it. Every quantile
// the profile prints (file sizes, first bytes, request times) is one of the values measured, never an interpolation
// between two.

/** The nearest-rank p-quantile of `sorted` (ascending, not empty). */
export function nearestRank(sorted: ArrayLike<number>, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

/** The tail a profile reports of a set of times: nearest-rank p50, p95 and p99, and how many values. */
export interface TailQuantiles {
  p50: number;
  p95: number;
  p99: number;
  n: number;
}

/** Nearest-rank p50, p95 and p99 of `values` (any order; not modified), or null when there are none. */
export function tailQuantiles(values: readonly number[]): TailQuantiles | null {
  if (values.length === 0) return null;
  const sorted = Float64Array.from(values).sort();
  return {
    p50: nearestRank(sorted, 0.5),
    p95: nearestRank(sorted, 0.95),
    p99: nearestRank(sorted, 0.99),
    n: sorted.length,
  };
}
