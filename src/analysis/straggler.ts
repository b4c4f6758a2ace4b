/**
 * The straggler of a multi-rank job: the rank whose loader the others wait for.
 *
 * Ranks that all-reduce their gradients every iteration run at one pace. A rank whose data comes late waits for it in
 * its loader (its wait grows); every other rank waits for that rank at the collective, inside its step. So the ranks'
 * iteration times agree, and the straggler is told by its wait: longer than the least-waiting rank's beyond both
 * intervals. Its cause is where the wait first shows: already in the cached mode, its loader's CPU (prep: dearer
 * samples, fewer workers, a busier core); only in the cold mode, its storage (fetch).
 */
import type { Analysis, Estimate, ModeResult, RankResult } from '../schema/profile.js';
import { tailQuantiles } from '../quantile.js';

/** A rank's wait for data in one mode, per iteration after warm-up. */
export interface RankWait {
  rank: number;
  /** The node it ran on and its index among that node's ranks (LOCAL_RANK where ranks are placed in order). */
  node: { hostname: string; nodeRank: number } | null;
  localRank: number;
  iterMs: Estimate;
  waitMs: Estimate;
  stepMs: Estimate;
  /** Quantiles of its measured iterations' waits, ms; null without measured iterations. */
  waitQuantilesMs: { p50: number; p95: number; p99: number } | null;
}

/** The rank the others wait for (docs/json-output.md). */
export type Straggler = NonNullable<Analysis['straggler']>;

/** Each rank's wait in `mode`, in rank order; ranks without a summary are left out. */
export function rankWaits(mode: ModeResult): RankWait[] {
  const ranks = mode.ranks.filter(
    (r): r is RankResult & { summary: NonNullable<RankResult['summary']> } => r.summary !== null,
  );
  return ranks
    .map((r) => {
      const tail = tailQuantiles(r.iterations.filter((it) => !it.warmup).map((it) => it.waitMs));
      const sameNode = ranks
        .filter((o) => sameHost(o, r))
        .map((o) => o.rank)
        .sort((a, b) => a - b);
      return {
        rank: r.rank,
        node: r.node ?? null,
        localRank: sameNode.indexOf(r.rank),
        iterMs: r.summary.iterMs,
        waitMs: r.summary.waitMs,
        stepMs: r.summary.computeMs,
        waitQuantilesMs: tail && { p50: tail.p50, p95: tail.p95, p99: tail.p99 },
      };
    })
    .sort((a, b) => a.rank - b.rank);
}

function sameHost(a: RankResult, b: RankResult): boolean {
  return (a.node?.hostname ?? '') === (b.node?.hostname ?? '') && (a.node?.nodeRank ?? 0) === (b.node?.nodeRank ?? 0);
}

/** Whether `a` exceeds `b` beyond both intervals (an unknown interval counts as none). */
function beyondNoise(a: Estimate, b: Estimate): boolean {
  return a.mean - b.mean > (a.halfWidth ?? 0) + (b.halfWidth ?? 0);
}

/** Below this share of the iteration a rank's extra wait is not worth naming, however precise. */
const MATERIAL_SHARE = 0.03;

/**
 * The rank that waits longest for data, beyond the least-waiting rank's wait and both intervals, by at least
 * MATERIAL_SHARE of its iteration.
 */
function longestWaiter(waits: readonly RankWait[]): { worst: RankWait; least: RankWait } | null {
  if (waits.length < 2) return null;
  const worst = waits.reduce((w, r) => (r.waitMs.mean > w.waitMs.mean ? r : w));
  const least = waits.reduce((l, r) => (r.waitMs.mean < l.waitMs.mean ? r : l));
  const material = worst.waitMs.mean - least.waitMs.mean >= MATERIAL_SHARE * worst.iterMs.mean;
  return worst.rank !== least.rank && material && beyondNoise(worst.waitMs, least.waitMs) ? { worst, least } : null;
}

/**
 * The mode the straggler is judged in and its ranks' waits: the cold mode where it ran, else the cached; null with
 * fewer than two ranks.
 */
export function judgedRankWaits(modes: {
  cached?: ModeResult;
  cold?: ModeResult;
}): { mode: 'cached' | 'cold'; waits: RankWait[] } | null {
  const mode = modes.cold ? 'cold' : modes.cached ? 'cached' : null;
  if (!mode || modes[mode]!.ranks.length < 2) return null;
  return { mode, waits: rankWaits(modes[mode]!) };
}

/**
 * The straggler of a multi-rank profile, or null (one rank, or no rank waits beyond the others' noise and 3% of its
 * iteration).
 */
export function findStraggler(modes: { cached?: ModeResult; cold?: ModeResult }): Straggler | null {
  const judgedWaits = judgedRankWaits(modes);
  if (!judgedWaits) return null;
  const judged = judgedWaits.mode;
  const found = longestWaiter(judgedWaits.waits);
  if (!found) return null;
  const { worst, least } = found;
  // Already behind with its data in memory: its loader's CPU. Behind only when the data comes from storage: its
  // storage.
  const cachedFound = judged === 'cold' && modes.cached ? longestWaiter(rankWaits(modes.cached)) : null;
  const cause = judged === 'cached' || cachedFound?.worst.rank === worst.rank ? 'prep' : 'fetch';
  const extra: Estimate = {
    mean: worst.waitMs.mean - least.waitMs.mean,
    halfWidth:
      worst.waitMs.halfWidth !== null && least.waitMs.halfWidth !== null
        ? Math.hypot(worst.waitMs.halfWidth, least.waitMs.halfWidth)
        : null,
    proven: worst.waitMs.proven && least.waitMs.proven,
  };
  return {
    mode: judged,
    rank: worst.rank,
    node: worst.node,
    localRank: worst.localRank,
    cause,
    waitMs: worst.waitMs,
    leastWaitMs: least.waitMs,
    extraWaitMs: extra,
    leastWaitingRank: least.rank,
    text: stragglerText(worst, least, extra, cause, judged),
  };
}

function stragglerText(
  worst: RankWait,
  least: RankWait,
  extra: Estimate,
  cause: 'prep' | 'fetch',
  mode: 'cached' | 'cold',
): string {
  const where = worst.node
    ? `local rank ${worst.localRank} on node ${worst.node.hostname}, node rank ${worst.node.nodeRank}`
    : `local rank ${worst.localRank}`;
  const interval = extra.halfWidth !== null ? ` ± ${extra.halfWidth.toFixed(1)}` : '';
  const why =
    cause === 'prep'
      ? "already with the data in memory: its loader's CPU (dearer samples, fewer loader workers, or a busier " +
        "core than the other ranks')"
      : 'only when the data comes from storage: its storage or its share of it (a slower disk, a colder cache, a ' +
        'farther server)';
  return (
    `rank ${worst.rank} (${where}) is the straggler: in the ${mode} mode it ` +
    `waits ${extra.mean.toFixed(1)}${interval} ms more per iteration ` +
    `for its data than rank ${least.rank}, ${why}; every other rank waits for it at the next collective, inside ` +
    `its step`
  );
}
