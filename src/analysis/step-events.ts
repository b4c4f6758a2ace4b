/**
 * What the iteration series of a mode holds besides steady training: saves that ran inside a step (their time is in
 * that iteration's computeMs) and the first batch of each epoch (its wait refills an empty pipeline). The split
 * subtracts both from a mode's per-iteration time, so the prep and fetch stalls are the steady ones and the checkpoint
 * and boundary stalls are counted once, in their own terms (checkpoint-stall.ts, boundary-stall.ts).
 */
import type {
  CheckpointRecord,
  EpochRecord,
  Estimate,
  Iteration,
  IterationSummary,
  ModeResult,
  Profile,
  RankResult,
} from '../schema/profile.js';
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
 * The rank whose saves blocked longest in all: in a data-parallel job one rank usually saves while the others wait for
 * it at the next collective, so its saves set everyone's pace.
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
 * A steady iteration's wait: the mean wait of the window's iterations that are not an epoch's first; null without such
 * iterations.
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
 * Of a rank's measured window, per iteration: the ms of saves inside steps (the saver's: the others wait for it at
 * their next collective, inside their own step) and of epoch starts' first waits beyond a steady wait.
 */
function eventShares(rank: RankResult, saver: RankResult | null): { saveMs: number; startMs: number } {
  const window = windowIterations(rank);
  if (window.length === 0) return { saveMs: 0, startMs: 0 };
  const inWindow = new Set(window.map((it) => it.i));
  const saveMs = sumOf(
    (saver?.checkpoints ?? []).filter((c) => c.inStep && inWindow.has(c.i)),
    (c: CheckpointRecord) => c.blockingMs,
  );
  const steady = steadyWaitMs(rank);
  const startMs =
    steady === null
      ? 0
      : sumOf(
          laterEpochs(rank).filter((e) => inWindow.has(e.i)),
          (e: EpochRecord) => firstWaitExcessMs(e, steady),
        );
  return { saveMs: saveMs / window.length, startMs: startMs / window.length };
}

/**
 * The mode as if it trained steadily: each rank's summary less its share of saves inside steps (from the step) and of
 * epoch starts (from the wait). The what-if model fits steady rates and adds the checkpoint and boundary stalls as
 * their own terms; a mode without either comes back unchanged.
 */
export function steadyMode<M extends ModeResult>(mode: M): M {
  const saver = savingRankOf(mode);
  if (!saver && !mode.ranks.some((r) => laterEpochs(r).length > 0)) return mode;
  const ranks = mode.ranks.map((rank) =>
    rank.summary ? { ...rank, summary: steadySummary(rank.summary, eventShares(rank, saver)) } : rank,
  );
  const pace = ranks.find((r) => r.rank === mode.paceRank);
  return {
    ...mode,
    ranks,
    summary:
      mode.summary && pace?.summary ? steadySummary(mode.summary, eventShares(paceRankOf(mode)!, saver)) : mode.summary,
  };
}

function steadySummary(summary: IterationSummary, shares: { saveMs: number; startMs: number }): IterationSummary {
  if (shares.saveMs === 0 && shares.startMs === 0) return summary;
  const less = (e: Estimate, ms: number): Estimate => ({ ...e, mean: Math.max(0, e.mean - ms) });
  const iterMs = less(summary.iterMs, shares.saveMs + shares.startMs);
  return {
    ...summary,
    iterMs,
    computeMs: less(summary.computeMs, shares.saveMs),
    waitMs: less(summary.waitMs, shares.startMs),
    samplesPerSec: iterMs.mean > 0 ? summary.samplesPerIter / (iterMs.mean / 1000) : summary.samplesPerSec,
  };
}

function sumOf<T>(items: readonly T[], value: (item: T) => number): number {
  let sum = 0;
  for (const item of items) sum += value(item);
  return sum;
}

/** The profile with every mode (and every sweep's) steadyMode: what the what-if model fits. */
export function steadyProfile(profile: Profile): Profile {
  const modes = profile.modes;
  return {
    ...profile,
    modes: {
      ...(modes.synthetic ? { synthetic: steadyMode(modes.synthetic) } : {}),
      ...(modes.cached ? { cached: steadyMode(modes.cached) } : {}),
      ...(modes.cold ? { cold: steadyMode(modes.cold) } : {}),
    },
    ...(profile.cpuSweep ? { cpuSweep: profile.cpuSweep.map(steadyMode) } : {}),
    ...(profile.workersSweep ? { workersSweep: profile.workersSweep.map(steadyMode) } : {}),
  };
}
