/**
 * The three measured modes every fitter rests on (synthetic, cached, cold), whether a parameter built on them is
 * proven, and whether one mode was really slower than another.
 */
import { difference, liesAbove, NAMING_MARGIN } from '../../analysis/estimate.js';
import type { Estimate, IterationSummary, ModeResult, Profile } from '../../schema/profile.js';
import { MISSING_TEXT } from '../advice-text.js';
import { notEnoughData, type Fitted, type NotEnoughData } from './fitted.js';

/** A mode with a summary: enough iterations were measured to use it. */
export type MeasuredMode = ModeResult & { summary: IterationSummary };

/** The modes the model needs, each measured. */
export interface MeasuredModes {
  /** Compute alone: the loader is not consulted. */
  synthetic: MeasuredMode;
  /** The whole dataset in the page cache: compute and prep. */
  cached: MeasuredMode;
  /**
   * Nothing cached: compute, prep and fetch; null where the profile has no measured cold mode (`--modes
   * synthetic,cached`): the fetch stage is then not fitted (coldMissing).
   */
  cold: MeasuredMode | null;
}

/**
 * A slow-down is called real when it is beyond noise and at least this share of the slower mode's iteration: smaller
 * ones do not decide what bounds the job.
 */
const REAL_STALL_SHARE = 0.03;

/**
 * The modes, or the first of synthetic and cached missing: compute and prep rest on those two. The cold mode only feeds
 * the fetch stage (storage, cache, remote requests): without it `cold` is null and coldMissing says what the fetch
 * questions lack.
 */
export function measuredModes(profile: Profile): Fitted<MeasuredModes> | NotEnoughData {
  const modes: Partial<MeasuredModes> = {};
  for (const mode of ['synthetic', 'cached'] as const) {
    const result = profile.modes[mode];
    if (!result) return notEnoughData(`modes.${mode}`, mode);
    if (result.summary === null) return notEnoughData(`modes.${mode}.summary`, mode);
    // A stalled mode's figures are not a measurement (analysis/stalls.ts): as good as missing.
    if (result.stalled) return notEnoughData(`a ${mode} mode that did not stall (modes.${mode}.stalled)`, mode);
    modes[mode] = result as MeasuredMode;
  }
  modes.cold = coldMissing(profile) === null ? (profile.modes.cold as MeasuredMode) : null;
  const measured = modes as MeasuredModes;
  const caveats = [measured.synthetic, measured.cached, measured.cold]
    .filter((m): m is MeasuredMode => m !== null && !m.state.proven)
    .map((m) => MISSING_TEXT.unprovenMode(m.mode, m.state.reason));
  return { kind: 'fitted', value: measured, parameters: [], caveats };
}

/** What the fetch stage lacks when the profile has no measured cold mode; null when it has one. */
export function coldMissing(profile: Profile): NotEnoughData | null {
  const cold = profile.modes.cold;
  if (!cold) return notEnoughData('modes.cold', 'cold');
  if (cold.summary === null) return notEnoughData('modes.cold.summary', 'cold');
  if (cold.stalled) return notEnoughData('a cold mode that did not stall (modes.cold.stalled)', 'cold');
  return null;
}

/** Whether a parameter resting on `modes` is proven: each proved its cache state and ran to its end. */
export function proven(...modes: ModeResult[]): boolean {
  return modes.every((m) => m.state.proven && m.status === 'ok');
}

/**
 * Whether `slow` was really slower than `fast`: their difference beyond noise (analysis/estimate.ts) and by a visible
 * share. A mode without an interval counts as exact here, so the other's noise still applies.
 */
export function reallySlower(slow: IterationSummary, fast: IterationSummary): boolean {
  const exact = (e: Estimate): Estimate => ({ ...e, halfWidth: e.halfWidth ?? 0 });
  const stall = difference(exact(slow.iterMs), exact(fast.iterMs));
  return liesAbove(stall) && stall.mean > REAL_STALL_SHARE * slow.iterMs.mean;
}

/**
 * Whether the loader set `run`'s pace against `before` (the synthetic mode for prep, the cached mode for fetch): the
 * training process waited longer for data, beyond noise and by the margin the profile names a stall by
 * (analysis/split.ts, callStall). A run slower only in its step (the step sharing CPUs or caches with the loader: the
 * profile's "contention") had a loader that kept up, so its pace is no measure of the loader's capacity; a PyTorch GAN
 * whose step ran 11% slower beside its workers was read as prep-bound and predicted 2x slower with one worker (it ran
 * the same).
 */
export function loaderSetPace(run: IterationSummary, before: IterationSummary): boolean {
  const exact = (e: Estimate): Estimate => ({ ...e, halfWidth: e.halfWidth ?? 0 });
  const waitGrowth = difference(exact(run.waitMs), exact(before.waitMs));
  return liesAbove(waitGrowth, NAMING_MARGIN * run.iterMs.mean) && reallySlower(run, before);
}
