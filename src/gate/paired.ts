/**
 * A/B in one run (gate --against): the reference (A) and the candidate (B) run in alternating rounds in the order A B B
 * A A B B A ..., and the change is judged on the paired differences of adjacent rounds. Both versions see the same
 * window of the shared machine, so its slow drift falls on both and cancels in each pair (duet benchmarking: Bulej et
 * al., ICPE 2020); the mirrored order makes a linear drift add +d and -d to alternate pairs, so it cancels in their
 * mean, and is fitted out of their spread. Pure functions: the runs are cli/against-rounds.ts's.
 */
import { tQuantile975 } from '../analysis/stats.js';

/** Which version a round runs. */
export type Arm = 'reference' | 'candidate';

/**
 * The order of `pairs` pairs of rounds: A B, B A, A B, B A, ... (ABBA blocks). An odd count ends on one A B pair, whose
 * drift is not mirrored.
 */
export function abbaOrder(pairs: number): Arm[] {
  const order: Arm[] = [];
  for (let k = 0; k < pairs; k++) {
    order.push(...(k % 2 === 0 ? (['reference', 'candidate'] as const) : (['candidate', 'reference'] as const)));
  }
  return order;
}

/** One measured round: its version and its pace. */
export interface RoundPace {
  /** Which version ran. */
  arm: Arm;
  /** The round's pace: the cold iteration time per sample, ms. */
  msPerSample: number;
}

/** The paired change from the reference to the candidate. */
export interface PairedChange {
  /** Pairs judged. */
  pairs: number;
  /** Each pair's candidate/reference - 1, in run order. */
  perPair: number[];
  /** The candidate's change of pace: exp(mean log ratio) - 1 (+0.10: 10% slower). */
  relative: number;
  /** Ends of its 95% t-interval (n - 1 degrees of freedom); null with fewer than 2 pairs. */
  low: number | null;
  high: number | null;
}

/**
 * The change of pace over adjacent pairs of rounds (rounds 2k and 2k+1, one of each version). Each pair gives the log
 * of candidate over reference: the log makes the change relative, symmetric and its interval multiplicative, so a pair
 * on a slow stretch of the machine weighs as much as one on a fast stretch. Throws a RangeError when a pair does not
 * hold one of each.
 */
export function pairedChange(rounds: readonly RoundPace[]): PairedChange {
  const logs: number[] = [];
  const orders: number[] = [];
  for (let k = 0; k + 1 < rounds.length; k += 2) {
    const a = [rounds[k], rounds[k + 1]].find((r) => r.arm === 'reference');
    const b = [rounds[k], rounds[k + 1]].find((r) => r.arm === 'candidate');
    if (!a || !b) throw new RangeError(`rounds ${k + 1} and ${k + 2} are not one of each version`);
    if (!(a.msPerSample > 0) || !(b.msPerSample > 0)) throw new RangeError(`round ${k + 1} or ${k + 2} has no pace`);
    logs.push(Math.log(b.msPerSample / a.msPerSample));
    orders.push(rounds[k] === a ? 1 : -1);
  }
  if (logs.length === 0) throw new RangeError('no complete pair of rounds');
  const fit = orderAdjustedMean(logs, orders);
  const perPair = logs.map((v) => Math.expm1(v));
  if (fit.halfWidth === null)
    return { pairs: logs.length, perPair, relative: Math.expm1(fit.mean), low: null, high: null };
  return {
    pairs: logs.length,
    perPair,
    relative: Math.expm1(fit.mean),
    low: Math.expm1(fit.mean - fit.halfWidth),
    high: Math.expm1(fit.mean + fit.halfWidth),
  };
}

/**
 * The mean log ratio with its 95% half-width, the order of each pair taken out: d_k = m + delta s_k + e_k, with s_k =
 * +1 for a pair run A then B and -1 for B then A. A drift of the machine (or a first round that warms it for the
 * second) adds +delta to one order and -delta to the other: in the mirrored schedule it cancels from m, and fitting it
 * keeps it out of the spread too (least squares, n - 2 degrees of freedom). With fewer than 3 pairs, or one order only,
 * the plain mean and t-interval (n - 1).
 */
export function orderAdjustedMean(
  d: readonly number[],
  s: readonly number[],
): { mean: number; halfWidth: number | null } {
  const n = d.length;
  const sum = (f: (k: number) => number) => d.reduce((acc, _, k) => acc + f(k), 0);
  const sd = sum((k) => d[k]);
  const ss = sum((k) => s[k]);
  const det = n * n - ss * ss;
  if (n >= 3 && det > 0) {
    const sds = sum((k) => d[k] * s[k]);
    const mean = (n * sd - ss * sds) / det;
    const delta = (n * sds - ss * sd) / det;
    const rss = sum((k) => (d[k] - mean - delta * s[k]) ** 2);
    return { mean, halfWidth: tQuantile975(n - 2) * Math.sqrt(((rss / (n - 2)) * n) / det) };
  }
  const mean = sd / n;
  if (n < 2) return { mean, halfWidth: null };
  const variance = sum((k) => (d[k] - mean) ** 2) / (n - 1);
  return { mean, halfWidth: tQuantile975(n - 1) * Math.sqrt(variance / n) };
}

/** The regression verdict on a paired change: 'fail' only when the whole interval lies above the limit. */
export type PairedJudgement = 'fail' | 'pass' | 'pass-within-noise';

/**
 * As the regression rule judges two profiles (rules.ts): a regression fails only when the lower end of its 95% interval
 * lies above the limit, so a version that is no slower than the limit fails at most 2.5% of the time, and an unchanged
 * one far less. Without an interval (one pair) the mean is judged, as the rule does without intervals.
 */
export function judgePaired(change: PairedChange, limit: number): PairedJudgement {
  if (change.low === null) return change.relative > limit ? 'fail' : 'pass';
  if (change.low > limit) return 'fail';
  return change.relative > limit ? 'pass-within-noise' : 'pass';
}
