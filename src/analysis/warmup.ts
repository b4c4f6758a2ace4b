/** Warm-up detection: how many leading iterations to discard before measuring. */

/** Options of {@link detectWarmup}. */
export interface WarmupOptions {
  /** Iterations per MSER batch (5 in MSER-5). A multiple of the loader's workers keeps bursts inside one batch. */
  batchSize?: number;
  /** Largest fraction of the series that may be discarded (MSER's rule: half). */
  maxFraction?: number;
  /** Iterations always discarded: iteration 0 includes worker start-up and the first fetch. */
  minDiscard?: number;
  /** Standard errors by which the discarded part's mean must differ from the rest's (default 3). */
  minShiftSe?: number;
}

/**
 * Number of leading iterations to discard, by MSER-5 (White 1997, "An effective truncation heuristic for bias reduction
 * in simulation output"; White, Cobb & Spratt 2000). The series is cut into batches of 5 and their means Z_1..Z_k; the
 * truncation point d (in batches) minimises
 *
 *   MSER(d) = sum_{j>d} (Z_j - mean_{j>d} Z)^2 / (k - d)^2,
 *
 * the squared standard error of the mean of what remains. d is restricted to the first half of the series, as MSER
 * recommends: near the end the statistic is unstable and would favour cutting off almost everything. A slow start
 * inflates the variance of the whole series until it is cut off.
 *
 * On a stationary series MSER(d) grows only slowly with d (fewer points, same variance), so chance alone often puts its
 * minimum at d > 0 (Pasupathy & Schmeiser 2010 discuss this tendency). Two guards keep chance from cutting good data.
 * First, the one-standard-error rule (Breiman et al. 1984, CART): take the smallest d whose MSER is within one standard
 * error of the minimum. Second, a cut is kept only when the discarded batches' mean differs from the kept batches' mean
 * by at least `minShiftSe` standard errors: a warm-up is a bias, and a stretch without one is data worth keeping.
 *
 * Returns max(minDiscard, d * batchSize), never more than the series length. Runs in O(n) with suffix sums, so it is
 * cheap enough to run repeatedly.
 */
export function detectWarmup(iterMs: readonly number[], opts: WarmupOptions = {}): number {
  const m = opts.batchSize ?? 5;
  const minDiscard = Math.min(opts.minDiscard ?? 1, iterMs.length);
  if (!Number.isInteger(m) || m < 1) throw new RangeError(`MSER batch size must be a positive integer, got ${m}`);
  const k = Math.floor(iterMs.length / m);
  if (k < 2) return minDiscard;

  const z = new Float64Array(k);
  for (let j = 0; j < k; j++) {
    let sum = 0;
    for (let i = j * m; i < (j + 1) * m; i++) sum += iterMs[i];
    z[j] = sum / m;
  }
  return Math.min(iterMs.length, Math.max(minDiscard, mserTruncation(z, k, opts) * m));
}

/**
 * The MSER truncation point, in batches, from the first `k` (>= 2) batch means `z` (see detectWarmup). Split out so
 * that a caller that keeps batch means as iterations arrive (the adaptive stopping rule) pays O(k) per call instead of
 * re-reading every iteration.
 */
export function mserTruncation(
  z: Float64Array,
  k: number,
  opts: Pick<WarmupOptions, 'maxFraction' | 'minShiftSe'> = {},
): number {
  const maxFraction = opts.maxFraction ?? 0.5;
  // Shift by one batch mean before squaring to limit cancellation in Q - S^2/n.
  const shift = z[k - 1];
  const dMax = Math.min(Math.floor(k * maxFraction), k - 2);
  const mser = new Float64Array(dMax + 1);
  let s = 0;
  let q = 0;
  let bestD = 0;
  let best = Infinity;
  // Walk d from the end so the suffix sums accumulate; keep the smallest d on ties.
  for (let d = k - 1; d >= 0; d--) {
    const v = z[d] - shift;
    s += v;
    q += v * v;
    if (d > dMax) continue;
    const n = k - d;
    mser[d] = Math.max(0, q - (s * s) / n) / (n * n);
    if (mser[d] <= best) {
      best = mser[d];
      bestD = d;
    }
  }
  // One-standard-error rule: the smallest d whose MSER is within one SE of the minimum (SE of a variance from n points:
  // about sqrt(2 / (n - 1)) of it).
  const limit = best * (1 + Math.sqrt(2 / Math.max(1, k - bestD - 1)));
  for (let d = 0; d < bestD; d++) {
    if (mser[d] <= limit) {
      bestD = d;
      break;
    }
  }
  if (bestD > 0 && !isShifted(z, k, bestD, opts.minShiftSe ?? 3)) bestD = 0;
  return bestD;
}

/** Whether the mean of z[0..d) differs from the mean of z[d..k) by at least `minSe` standard errors. */
function isShifted(z: Float64Array, k: number, d: number, minSe: number): boolean {
  let head = 0;
  for (let j = 0; j < d; j++) head += z[j];
  head /= d;
  let tail = 0;
  for (let j = d; j < k; j++) tail += z[j];
  tail /= k - d;
  let ss = 0;
  for (let j = d; j < k; j++) ss += (z[j] - tail) ** 2;
  const variance = ss / Math.max(1, k - d - 1);
  const se = Math.sqrt(variance * (1 / d + 1 / (k - d)));
  // A kept part with no spread at all: any difference is a shift.
  return se === 0 ? head !== tail : Math.abs(head - tail) >= minSe * se;
}

/**
 * The iterations with the `count` lowest indices (the warm-up, as the summary counted it) flagged `warmup: true`, so
 * that a report of several runs joined together can still tell each run's warm-up apart.
 */
export function markWarmup<T extends { i: number }>(
  iterations: readonly T[],
  count: number,
): (T & { warmup?: true })[] {
  if (count <= 0 || iterations.length === 0) return [...iterations];
  const cut = iterations.map((it) => it.i).sort((a, b) => a - b)[Math.min(count, iterations.length) - 1];
  return iterations.map((it) => (it.i <= cut ? { ...it, warmup: true as const } : it));
}
