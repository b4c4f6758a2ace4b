/**
 * Across ranks of a data-parallel job, the slowest rank sets the pace.
 */
import type { RankResult } from '../schema/profile.js';

/**
 * The rank that sets the mode's pace, among ranks with a summary; null when none has one.
 *
 * The slowest rank (largest mean iteration time; ties to the lowest rank number), except where ranks
 * synchronise every iteration (gradients all-reduced): then every rank runs at one pace, and a rank whose
 * loader falls behind makes the others wait inside their step, at the collective. Among the ranks whose
 * iteration time is within noise of the slowest, the one that waits longest for its data is the one the
 * others wait for: its wait is the job's, its step the step without that wait. Picking by iteration time
 * alone takes whichever rank is slower by a hair, whose step holds the other's wait (a straggler's prep
 * stall read as CPU contention), and may take another rank in each run of a mode.
 */
export function pickPaceRank(ranks: readonly RankResult[]): RankResult | null {
  const summarized = ranks.filter((r) => r.summary !== null);
  if (summarized.length === 0) return null;
  const slowest = summarized.reduce((pace, r) => (r.summary!.iterMs.mean > pace.summary!.iterMs.mean || (r.summary!.iterMs.mean === pace.summary!.iterMs.mean && r.rank < pace.rank) ? r : pace));
  const slow = slowest.summary!.iterMs;
  const together = summarized.filter((r) => slow.mean - r.summary!.iterMs.mean <= (slow.halfWidth ?? 0) + (r.summary!.iterMs.halfWidth ?? 0));
  return together.reduce((pace, r) => (r.summary!.waitMs.mean > pace.summary!.waitMs.mean || (r.summary!.waitMs.mean === pace.summary!.waitMs.mean && r.rank < pace.rank) ? r : pace));
}
