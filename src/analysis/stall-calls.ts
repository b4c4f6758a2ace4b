/**
 * Whether each stall of the split is named (its call), and what the noise leaves room for: decided once here, read by
 * the verdict (split.ts boundOf) and by every renderer of the split table (report/summary-rows.ts), so that the two
 * never disagree (issue 42).
 */
import type { Analysis, Estimate, StallCall } from '../schema/profile.js';
import type { Bound, TextContext } from './advice-text.js';
import { liesAbove } from './estimate.js';

/** Below this share of the iteration time, data stalls are not worth acting on. */
export const STALL_THRESHOLD = 0.1;

export type StallParts = NonNullable<Analysis['prepStallParts']>;

/**
 * 'within-noise' unless the interval's lower end clears `margin` of the iteration (without an interval, the mean must).
 * A stall that does clear it while the wait for data did not grow beyond the same margin, and whose step grew beyond it
 * by more than the wait did, is 'contention': the job never waited longer for data, its step ran slower beside the
 * loader (a CPU-run step sharing cores with the workers). A stall whose step did not grow is a wait, however noisy the
 * wait's own interval: 'stall'.
 */
export function callStall(
  stall: Estimate | null,
  parts: StallParts | null,
  iter: Estimate | null,
  margin: number,
): StallCall {
  if (stall === null || iter === null) return 'unknown';
  const clears = (e: Estimate) => liesAbove(e, margin * iter.mean);
  // A wait for data that grew beyond the margin is a data stall even when the step's own noise (a machine whose pace
  // moved) blurs the stall's total.
  if (parts !== null && clears(parts.waitGrowthMs)) return 'stall';
  if (!clears(stall)) return 'within-noise';
  const stepGrew = parts !== null && clears(parts.stepGrowthMs) && parts.stepGrowthMs.mean > parts.waitGrowthMs.mean;
  return stepGrew ? 'contention' : 'stall';
}

/** Whether a call names its stall in the split table: a wait for data, or the step slowed beside the loader. */
export function isNamed(call: StallCall | undefined): boolean {
  return call === 'stall' || call === 'contention';
}

/**
 * When no stall is named, whether the noise still leaves room for a data stall: the upper ends of the wait growths of
 * the stalls not named, together, reach STALL_THRESHOLD of the iteration. Then the profile cannot tell a compute-bound
 * job from a data-bound one on this machine, and says so.
 */
export function inconclusiveOf(
  calls: { prep: StallCall; fetch: StallCall },
  prep: StallParts | null,
  fetch: StallParts | null,
  iter: Estimate | null,
  drift: Analysis['drift'] | null,
): TextContext['inconclusive'] {
  if (iter === null || !(iter.mean > 0)) return null;
  let roomMs = 0;
  for (const [call, parts] of [
    [calls.prep, prep],
    [calls.fetch, fetch],
  ] as const) {
    if (isNamed(call) || parts === null || parts.waitGrowthMs.halfWidth === null) continue;
    roomMs += Math.max(0, parts.waitGrowthMs.mean + parts.waitGrowthMs.halfWidth);
  }
  const roomFraction = roomMs / iter.mean;
  return roomFraction >= STALL_THRESHOLD ? { roomFraction, runToRunPct: drift?.runToRunPct ?? null } : null;
}

/**
 * The stall that is contention, with its step growth and share: the verdict's own when it names one, else the larger
 * when both are.
 */
export function contentionOf(
  calls: { prep: StallCall; fetch: StallCall },
  prep: StallParts | null,
  fetch: StallParts | null,
  iter: Estimate | null,
  bound: Bound,
): TextContext['contention'] {
  const found = [
    { stall: 'prep' as const, parts: prep },
    { stall: 'fetch' as const, parts: fetch },
  ].filter((c) => calls[c.stall] === 'contention' && c.parts !== null);
  if (found.length === 0 || iter === null || !(iter.mean > 0)) return null;
  const worst =
    found.find((c) => c.stall === bound) ??
    found.reduce((a, b) => (b.parts!.stepGrowthMs.mean > a.parts!.stepGrowthMs.mean ? b : a));
  return {
    stall: worst.stall,
    stepGrowthMs: worst.parts!.stepGrowthMs.mean,
    fraction: worst.parts!.stepGrowthMs.mean / iter.mean,
  };
}
