/**
 * Across ranks of a data-parallel job, the slowest rank sets the pace.
 */
import type { RankResult } from '../schema/profile.js';

/**
 * The rank with the largest mean per-iteration time, among ranks with a
 * summary. Data-parallel training synchronises gradients every iteration, so
 * every rank waits for the slowest one. Ties go to the lowest rank number.
 * Null when no rank has a summary.
 */
export function pickPaceRank(ranks: readonly RankResult[]): RankResult | null {
  let pace: RankResult | null = null;
  for (const r of ranks) {
    if (r.summary === null) continue;
    if (
      pace === null ||
      r.summary.iterMs.mean > pace.summary!.iterMs.mean ||
      (r.summary.iterMs.mean === pace.summary!.iterMs.mean && r.rank < pace.rank)
    ) {
      pace = r;
    }
  }
  return pace;
}
