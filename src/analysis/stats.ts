/**
 * Small statistics helpers for the analysis layer: Student-t quantile, mean, median and the batch-means confidence
 * interval. Pure functions.
 */

/** 97.5% quantiles of Student's t for df = 1..30 (two-sided 95%), to 6 digits. */
const T975_TABLE: readonly number[] = [
  NaN, // df = 0 is undefined
  12.706205,
  4.302653,
  3.182446,
  2.776445,
  2.570582,
  2.446912,
  2.364624,
  2.306004,
  2.262157,
  2.228139,
  2.200985,
  2.178813,
  2.160369,
  2.144787,
  2.13145,
  2.119905,
  2.109816,
  2.100922,
  2.093024,
  2.085963,
  2.079614,
  2.073873,
  2.068658,
  2.063899,
  2.059539,
  2.055529,
  2.051831,
  2.048407,
  2.04523,
  2.042272,
];

/** 97.5% quantiles of t for df = 1.0, 1.1, ..., 2.0, where Hill's approximation is weak. */
const T975_LOW_DF: readonly number[] = [
  12.706205, 10.276801, 8.648827, 7.500529, 6.657003, 6.016663, 5.517245, 5.118839, 4.794881, 4.527118, 4.302653,
];

/** 97.5% quantile of the standard normal distribution. */
const Z975 = 1.959963984540054;

/**
 * Cornish-Fisher expansion of the t quantile in powers of 1/df (Abramowitz & Stegun 1964, 26.7.5). With four terms it
 * is accurate to better than 1e-5 at df >= 30, where it takes over from the table.
 */
function tCornishFisher(df: number): number {
  const z = Z975;
  const z3 = z ** 3;
  const z5 = z ** 5;
  const z7 = z ** 7;
  const z9 = z ** 9;
  const g1 = (z3 + z) / 4;
  const g2 = (5 * z5 + 16 * z3 + 3 * z) / 96;
  const g3 = (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / 384;
  const g4 = (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / 92160;
  return z + g1 / df + g2 / df ** 2 + g3 / df ** 3 + g4 / df ** 4;
}

/**
 * Hill's approximation of the t quantile for real df (G. W. Hill 1970, "Algorithm 396: Student's t-quantiles", CACM
 * 13(10)), here for the two-sided 5% level. Within 3e-4 of the exact value for df >= 2; up to 5% high for 1 < df < 2,
 * so not used there.
 */
function tHill(n: number): number {
  const p = 0.05;
  const a = 1 / (n - 0.5);
  const b = 48 / (a * a);
  let c = (((20700 * a) / b - 98) * a - 16) * a + 96.36;
  const d = ((94.5 / (b + c) - 3) / b + 1) * Math.sqrt((a * Math.PI) / 2) * n;
  let x = d * p;
  let y = x ** (2 / n);
  if (y > 0.05 + a) {
    x = Z975;
    y = x * x;
    if (n < 5) c += 0.3 * (n - 4.5) * (x + 0.6);
    c = (((0.05 * d * x - 5) * x - 7) * x - 2) * x + b + c;
    y = (((((0.4 * y + 6.3) * y + 36) * y + 94.5) / c - y - 3) / b + 1) * x;
    y = a * y * y;
    y = y > 0.002 ? Math.exp(y) - 1 : 0.5 * y * y + y;
  } else {
    y =
      ((1 / (((n + 6) / (n * y) - 0.089 * d - 0.822) * (n + 2) * 3) + 0.5 / (n + 4)) * y - 1) * ((n + 1) / (n + 2)) +
      1 / y;
  }
  return Math.sqrt(n * y);
}

/**
 * 97.5% quantile of Student's t with `df` degrees of freedom (the multiplier of a two-sided 95% confidence interval).
 * Exact table for integer df <= 30, Cornish-Fisher at df >= 30 (error < 1e-5), Hill's algorithm for fractional df in
 * (2, 30) (error < 3e-4), and for 1 < df < 2 a 0.1-step table interpolated in log q against 1/df (relative error <
 * 1e-3). Block counts give integer df; the fractional paths are there for Welch-style degrees of freedom. Throws a
 * RangeError for df < 1 or NaN; df = Infinity gives the normal quantile.
 */
export function tQuantile975(df: number): number {
  if (df === Infinity) return Z975;
  if (!Number.isFinite(df) || df < 1) throw new RangeError(`t quantile needs df >= 1, got ${df}`);
  if (df >= 30) return tCornishFisher(df);
  if (Number.isInteger(df)) return T975_TABLE[df];
  if (df > 2) return tHill(df);
  const i = Math.min(9, Math.floor((df - 1) * 10));
  const lo = 1 + i / 10;
  const hi = lo + 0.1;
  const w = (1 / lo - 1 / df) / (1 / lo - 1 / hi);
  return Math.exp(Math.log(T975_LOW_DF[i]) * (1 - w) + Math.log(T975_LOW_DF[i + 1]) * w);
}

/** The sum of `values` (sizes, typed or not). */
export function sum(values: ArrayLike<number>): number {
  let total = 0;
  for (let i = 0; i < values.length; i++) total += values[i];
  return total;
}

/** Arithmetic mean; NaN for an empty array. */
export function mean(values: readonly number[]): number {
  return sum(values) / values.length;
}

/** Median (mean of the two middle values for even length); NaN for an empty array. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Result of the batch-means method. */
export interface BatchMeansResult {
  /** Mean over the whole blocks (total / iterations); the plain mean when no block is complete. */
  mean: number;
  /** Half-width of the 95% confidence interval of the mean; null with fewer than 2 blocks. */
  halfWidth: number | null;
  /** Whole blocks used. */
  blocks: number;
}

/**
 * Batch means (Schmeiser 1982, "Batch size effects in the analysis of simulation output"; Law & Kelton, Simulation
 * Modeling and Analysis, 9.5.3): split the series into consecutive non-overlapping blocks of `blockSize`, treat the
 * block means as roughly independent, and build a t interval from them. This tolerates correlation shorter than a
 * block, such as a DataLoader delivering batches in bursts of W workers.
 *
 * The incomplete tail block is dropped, so the mean is total / iterations over the whole blocks and matches the
 * interval. Empty input gives a NaN mean.
 */
export function batchMeans(values: readonly number[], blockSize: number): BatchMeansResult {
  if (!Number.isInteger(blockSize) || blockSize < 1) {
    throw new RangeError(`block size must be a positive integer, got ${blockSize}`);
  }
  const blocks = Math.floor(values.length / blockSize);
  if (blocks === 0) return { mean: mean(values), halfWidth: null, blocks: 0 };
  const blockMeans = new Float64Array(blocks);
  let total = 0;
  for (let b = 0; b < blocks; b++) {
    let sum = 0;
    const start = b * blockSize;
    for (let i = start; i < start + blockSize; i++) sum += values[i];
    blockMeans[b] = sum / blockSize;
    total += sum;
  }
  const grand = total / (blocks * blockSize);
  if (blocks < 2) return { mean: grand, halfWidth: null, blocks };
  let ss = 0;
  for (const m of blockMeans) ss += (m - grand) ** 2;
  const sd = Math.sqrt(ss / (blocks - 1));
  return { mean: grand, halfWidth: (tQuantile975(blocks - 1) * sd) / Math.sqrt(blocks), blocks };
}
