/**
 * What the iteration series of a mode holds besides steady training: saves
 * that ran inside a step (their time is in that iteration's computeMs) and
 * the first batch of each epoch (its wait refills an empty pipeline). The
 * split subtracts both from a mode's per-iteration time, so the prep and
 * fetch stalls are the steady ones and the checkpoint and boundary stalls are
 * counted once, in their own terms (checkpoint-stall.ts, boundary-stall.ts).
 */
import type { CheckpointRecord, EpochRecord, Iteration, ModeResult, RankResult } from '../schema/profile.js';
import { mean } from './stats.js';

/** The iterations of a rank's measured window: those not flagged warm-up. */
export function windowIterations(rank: RankResult): Iteration[] {
  return rank.iterations.filter((it) => !it.warmup);
}

/** The rank that set the mode's pace, or null. */
export function paceRankOf(mode: ModeResult): RankResult | null {
  return mode.ranks.find((r) => r.rank === mode.paceRank) ?? null;
}

/**
 * The rank whose saves blocked longest in all: in a data-parallel job one
 * rank usually saves while the others wait for it at the next collective, so
 * its saves set everyone's pace.
 */
export function savingRankOf(mode: ModeResult): RankResult | null {
  let best: RankResult | null = null;
  let bestMs = 0;
  for (const rank of mode.ranks) {
    const ms = (rank.checkpoints ?? []).reduce((sum, c) => sum + c.blockingMs, 0);
    if (ms > bestMs) [best, bestMs] = [rank, ms];
  }
  return best;
}

/** Epoch starts after a rank's first epoch (their first batch found a pipeline that ran before). */
export function laterEpochs(rank: RankResult): EpochRecord[] {
  return (rank.epochs ?? []).filter((e) => e.epoch > 0);
}

/**
 * A steady iteration's wait: the mean wait of the window's iterations that
 * are not an epoch's first; null without such iterations.
 */
export function steadyWaitMs(rank: RankResult): number | null {
  const starts = new Set((rank.epochs ?? []).map((e) => e.i));
  const waits = windowIterations(rank)
    .filter((it) => !starts.has(it.i))
    .map((it) => it.waitMs);
  return waits.length > 0 ? mean(waits) : null;
}

/** An epoch start's first wait beyond a steady one, ms (never negative). */
export function firstWaitExcessMs(epoch: EpochRecord, steadyMs: number): number {
  return Math.max(0, epoch.firstWaitMs - steadyMs);
}

/**
 * Per iteration of the mode's measured window, the ms that belong to saves
 * inside a step and to the first waits of later epochs beyond a steady wait:
 * what its per-iteration time holds that is not steady training. 0 when the
 * job reported neither.
 */
export function eventMsPerIteration(mode: ModeResult): number {
  const pace = paceRankOf(mode);
  if (!pace) return 0;
  const window = windowIterations(pace);
  if (window.length === 0) return 0;
  const inWindow = new Set(window.map((it) => it.i));
  const saver = savingRankOf(mode);
  const saveMs = sumOf((saver?.checkpoints ?? []).filter((c) => c.inStep && inWindow.has(c.i)), (c: CheckpointRecord) => c.blockingMs);
  const steady = steadyWaitMs(pace);
  const startMs =
    steady === null ? 0 : sumOf(laterEpochs(pace).filter((e) => inWindow.has(e.i)), (e: EpochRecord) => firstWaitExcessMs(e, steady));
  return (saveMs + startMs) / window.length;
}

function sumOf<T>(items: readonly T[], value: (item: T) => number): number {
  let sum = 0;
  for (const item of items) sum += value(item);
  return sum;
}
