/**
 * Words of the split's caveats (split.ts decides when each applies and with which figures). Kept apart from the
 * arithmetic (STYLE.md, "Words"), as the verdicts and advice are in advice-text.ts.
 */
import type { Mode } from '../schema/events.js';
import type { ModeResult, StateProof } from '../schema/profile.js';
import { percent } from '../units.js';

/** What each mode measures: what is unknown without it. */
const NEEDED_FOR: Record<Mode, string> = {
  synthetic: 'compute time and prep stall',
  cached: 'prep and fetch stalls',
  cold: 'fetch stall and the real iteration time',
};

/** Each mode's cache state, as its unproven caveat names it. */
const STATE_WORD: Record<Mode, string> = {
  synthetic: 'synthetic (loader not consulted)',
  cached: 'cached',
  cold: 'cold',
};

/** The profiler's CPU share in one mode, and its keeper's when the mode kept the dataset evicted. */
export interface ProfilerShare {
  /** The mode. */
  mode: Mode;
  /** The profiler's CPU over the mode's wall time, in CPUs. */
  share: number;
  /** The keeper that kept the dataset evicted in this mode, if one did. */
  keeper?: StateProof['keeper'];
}

/** 'interrupted', or 'failed, stopped by timeout': the stop reason only where it adds something. */
function howItEnded(result: Pick<ModeResult, 'status' | 'stopReason'>): string {
  return result.status === result.stopReason ? result.status : `${result.status}, stopped by ${result.stopReason}`;
}

/** Caveats of the split, one function per kind; each returns one sentence without a final full stop. */
export const CAVEAT_TEXT = {
  missingMode: (mode: Mode): string => `no ${mode} mode: the ${NEEDED_FOR[mode]} are unknown`,

  tooFewIterations: (mode: Mode, result: Pick<ModeResult, 'status' | 'stopReason'>): string =>
    `${mode} mode has too few measured iterations (${howItEnded(result)}): the ${NEEDED_FOR[mode]} are unknown`,

  endedEarly: (mode: Mode, result: Pick<ModeResult, 'status' | 'stopReason'>): string =>
    `${mode} mode ended early (${howItEnded(result)}): its figures come from a partial run`,

  stalled: (mode: Mode, text: string): string =>
    `${mode} mode stalled (${text}): its figures are left out and the ${NEEDED_FOR[mode]} are unknown`,

  unprovenState: (mode: Mode, reason: string): string =>
    `${mode} mode: the ${STATE_WORD[mode]} state was not proven (${reason}); figures built on it are marked unproven`,

  prepCpuNotMeasurable: (cachedCpuSecPerSample: number, syntheticCpuSecPerSample: number): string =>
    `prep CPU per sample not measurable: the cached mode ` +
    `used ${(cachedCpuSecPerSample * 1000).toFixed(2)} CPU-ms per sample, ` +
    `no more than the synthetic mode's ${(syntheticCpuSecPerSample * 1000).toFixed(2)}`,

  /** The profiler's own CPU in its worst mode, beside the least it used in another (null when only one mode had it). */
  profilerOverhead: (worst: ProfilerShare, least: ProfilerShare | null): string => {
    const pct = (x: number) => percent(x, 0);
    return (
      `the profiler itself used ${pct(worst.share)} of a CPU in the ${worst.mode} mode` +
      (worst.keeper
        ? ` (keeping the dataset evicted, by ${worst.keeper.mechanism === 'scan' ? 'rescanning every file' : 'evicting each file the job closed'}: ${pct(worst.keeper.cpuShare)} of a CPU` +
          `${worst.keeper.fallbackReason ? `; scanning because ${worst.keeper.fallbackReason}` : ''})`
        : '') +
      (least ? `, ${pct(least.share)} in the ${least.mode} mode` : '') +
      `: on a machine with few cores this slows a CPU-bound job${worst.mode === 'synthetic' ? ', and its compute time with it' : ', and the difference shows in the stall that mode measures'}`
    );
  },

  /** A stall clamped at 0 because the mode with more to do (`later`) measured faster than `earlier`. */
  clampedStall: (
    stall: string,
    later: Mode,
    laterMs: number,
    earlier: Mode,
    earlierMs: number,
    sharesOfCold: boolean,
  ): string =>
    `the ${later} mode measured faster than the ${earlier} mode beyond noise ` +
    `(${laterMs.toFixed(1)} vs ${earlierMs.toFixed(1)} ms per iteration): ` +
    `the ${stall} stall is taken as 0${sharesOfCold ? ', so the shares of the cold iteration do not add up to 100%' : ''} ` +
    '(a machine whose speed or load changed between the runs; re-run to tell)',

  /**
   * The step itself took another time in the later mode of a stall (`fromMs` to `toMs`, `diff` apart) while the wait
   * for data grew by `waitGrowthMs`.
   */
  stepShift: (stall: 'prep' | 'fetch', fromMs: number, toMs: number, diff: number, waitGrowthMs: number): string => {
    const [from, to] = stall === 'prep' ? ['synthetic', 'cached'] : ['cached', 'cold'];
    return (
      `the training step itself took ${fromMs.toFixed(1)} ms in the ${from} mode and ${toMs.toFixed(1)} ms in ` +
      `the ${to} mode ` +
      `(${diff > 0 ? '+' : ''}${diff.toFixed(1)} ms): the ${stall} stall includes this difference; the wait for data ` +
      `${waitGrowthMs >= 0 ? 'grew' : 'shrank'} by ${Math.abs(waitGrowthMs).toFixed(1)} ms per iteration. ` +
      (diff < 0
        ? 'A step that got faster is most likely a machine whose speed or load changed between the runs (re-run ' +
          'to tell)'
        : (stall === 'prep'
            ? 'Pre-processing that competes with the step for CPU cores or caches makes the step slower (a real ' +
              'cost of the data pipeline); '
            : 'Reading from storage costs CPU too (the kernel, the loader, the profiler keeping the dataset ' +
              'evicted), which slows a step that runs on the CPU; an accelerator would not feel it; ') +
          'a machine whose speed or load changed between the runs does too (re-run to tell)')
    );
  },

  /**
   * The memory rate left out: bytes per sample were estimated and `readFraction` of the estimate (null: no cold mode)
   * does not confirm them.
   */
  byteEstimateUnconfirmed: (readFraction: number | null): string =>
    'memory read rate not shown: the job did not report bytes per batch, so they are estimated as samples x the ' +
    'mean file size ' +
    `(one file per sample), and ${readFraction === null ? 'no cold mode confirms it' : `the cold mode read ${percent(readFraction)} of that estimate from storage, which does not confirm it`}`,

  /** The pace moved between a mode's runs by as much as the named stalls; `largest` is the mode that moved most. */
  driftVersusStalls: (
    stalls: { name: string; ms: number }[],
    largest: { mode: Mode; firstMs: number; secondMs: number },
  ): string =>
    `the machine's pace moved between the two runs of a mode by as much as the ${stalls.map((x) => `${x.name} stall (${x.ms.toFixed(1)} ms)`).join(' and the ')}: ` +
    `the ${largest.mode} mode ran ${largest.firstMs.toFixed(1)} then ${largest.secondMs.toFixed(1)} ms per ` +
    `iteration. ` +
    'The mirrored order cancels a steady drift and the intervals include the scatter between runs; on a quieter ' +
    'machine the figures would be tighter',
} as const;
