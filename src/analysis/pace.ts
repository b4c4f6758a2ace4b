/** Across ranks of a data-parallel job, the slowest rank sets the pace. */
import type { RankResult } from '../schema/profile.js';

/**
 * The rank that sets the mode's pace, among ranks with a summary; null when none has one.
 *
 * The slowest rank (largest mean iteration time; ties to the lowest rank number), except where ranks synchronise every
 * iteration (gradients all-reduced): then every rank runs at one pace, and a rank whose loader falls behind makes the
 * others wait inside their step, at the collective. Among the ranks whose iteration time is within noise of the
 * slowest, the one that waits longest for its data is the one the others wait for: its wait is the job's, its step the
 * step without that wait. Picking by iteration time alone takes whichever rank is slower by a hair, whose step holds
 * the other's wait (a straggler's prep stall read as CPU contention), and may take another rank in each run of a mode.
 */
export function pickPaceRank(ranks: readonly RankResult[]): RankResult | null {
  const summarized = ranks.filter((r): r is Summarized => r.summary !== null);
  if (summarized.length === 0) return null;
  const slow = largest(summarized, (r) => r.summary.iterMs.mean).summary.iterMs;
  const together = summarized.filter(
    (r) => slow.mean - r.summary.iterMs.mean <= (slow.halfWidth ?? 0) + (r.summary.iterMs.halfWidth ?? 0),
  );
  return largest(together, (r) => r.summary.waitMs.mean);
}

type Summarized = RankResult & { summary: NonNullable<RankResult['summary']> };

/** The rank with the largest value; ties go to the lowest rank number. */
function largest(ranks: readonly Summarized[], value: (r: Summarized) => number): Summarized {
  return ranks.reduce((best, r) =>
    value(r) > value(best) || (value(r) === value(best) && r.rank < best.rank) ? r : best,
  );
}
