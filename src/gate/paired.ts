/**
 * A/B in one run (gate --against): the reference (A) and the candidate (B)
 * run in alternating rounds in the order A B B A A B B A ..., and the change
 * is judged on the paired differences of adjacent rounds. Both versions see
 * the same window of the shared machine, so its slow drift falls on both and
 * cancels in each pair (duet benchmarking: Bulej et al., ICPE 2020); the
 * mirrored order makes a linear drift add +d and -d to alternate pairs, so it
 * cancels in their mean too and only widens their spread (the interval stays
 * honest). Pure functions: the runs are cli/gate-against-action.ts's.
 */
import { tQuantile975 } from '../analysis/stats.js';

/** Which version a round runs. */
export type Arm = 'reference' | 'candidate';

/**
 * The order of `pairs` pairs of rounds: A B, B A, A B, B A, ... (ABBA
 * blocks). An odd count ends on one A B pair, whose drift is not mirrored.
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
 * The change of pace over adjacent pairs of rounds (rounds 2k and 2k+1, one
 * of each version). Each pair gives the log of candidate over reference: the
 * log makes the change relative, symmetric and its interval multiplicative,
 * so a pair on a slow stretch of the machine weighs as much as one on a fast
 * stretch. Throws a RangeError when a pair does not hold one of each.
 */
export function pairedChange(rounds: readonly RoundPace[]): PairedChange {
  const logs: number[] = [];
  for (let k = 0; k + 1 < rounds.length; k += 2) {
    const pair = [rounds[k], rounds[k + 1]];
    const a = pair.find((r) => r.arm === 'reference');
    const b = pair.find((r) => r.arm === 'candidate');
    if (!a || !b) throw new RangeError(`rounds ${k + 1} and ${k + 2} are not one of each version`);
    if (!(a.msPerSample > 0) || !(b.msPerSample > 0)) throw new RangeError(`round ${k + 1} or ${k + 2} has no pace`);
    logs.push(Math.log(b.msPerSample / a.msPerSample));
  }
  const n = logs.length;
  if (n === 0) throw new RangeError('no complete pair of rounds');
  const mean = logs.reduce((s, v) => s + v, 0) / n;
  const perPair = logs.map((v) => Math.expm1(v));
  if (n < 2) return { pairs: n, perPair, relative: Math.expm1(mean), low: null, high: null };
  const variance = logs.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1);
  const half = tQuantile975(n - 1) * Math.sqrt(variance / n);
  return { pairs: n, perPair, relative: Math.expm1(mean), low: Math.expm1(mean - half), high: Math.expm1(mean + half) };
}

/** The regression verdict on a paired change: 'fail' only when the whole interval lies above the limit. */
export type PairedJudgement = 'fail' | 'pass' | 'pass-within-noise';

/**
 * As the regression rule judges two profiles (rules.ts): a regression fails
 * only when the lower end of its 95% interval lies above the limit, so a
 * version that is no slower than the limit fails at most 2.5% of the time,
 * and an unchanged one far less. Without an interval (one pair) the mean is
 * judged, as the rule does without intervals.
 */
export function judgePaired(change: PairedChange, limit: number): PairedJudgement {
  if (change.low === null) return change.relative > limit ? 'fail' : 'pass';
  if (change.low > limit) return 'fail';
  return change.relative > limit ? 'pass-within-noise' : 'pass';
}
