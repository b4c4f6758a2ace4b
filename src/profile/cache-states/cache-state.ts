// What a mode's cache state is: set up before the job starts, undone when it ends. The real states beside this file:
// the page cache of the three modes (page-cache-state.ts), a held share for the overlap probe (partial-cache-state.ts),
// a capped cache for validate (capped-cache-state.ts); and a deterministic fake for tests
// (test/support/fake-cache-state.ts).
import type { Mode } from '../../schema/events.js';
import type { Dataset } from '../../system/dataset/dataset.js';
import type { StateProof } from '../../schema/profile-measures.js';
import type { ColdKeeper } from '../../system/keepers/cold-keeper.js';
import type { CachedPlan } from '../cached-subset.js';

/** How a cold keeper kept the dataset cold, and what it cost (the profile's stateProof.keeper before its share). */
export type KeeperUse = Omit<NonNullable<StateProof['keeper']>, 'cpuShare'>;

/** What a mode's cache state reports when it ends. */
export interface StateFinish {
  /** Evictions by the cold keeper after the initial one (cold modes). */
  reEvictions?: number;
  /** The cold keeper's mechanism and cost (cold modes). */
  keeper?: KeeperUse;
}

/** A cache state set up for one mode; finish() undoes what must not outlive the mode. */
export interface PreparedState {
  /** Dataset bytes resident in the page cache just before the job starts. */
  residentBytesBefore: number;
  /** Ends the state (stops the cold keeper); returns its counters. */
  finish(): Promise<StateFinish>;
  /**
   * Cold mode: file pages on the active list besides the dataset's just before the job reads (where the dataset's pages
   * will compete); absent elsewhere or unreadable.
   */
  otherActiveFile?: { bytes: number; source: string };
  /** Cached mode on a resident subset: the subset (as a dataset) and its record; absent on the whole dataset. */
  subset?: { dataset: Dataset; record: NonNullable<CachedPlan['subset']> };
}

/** Stops a cold keeper and turns its counters into what a state reports. */
export async function finishKeeper(keeper: ColdKeeper): Promise<StateFinish> {
  const stats = await keeper.stop();
  return {
    reEvictions: stats.reEvictions,
    keeper: {
      mechanism: stats.mechanism,
      cpuSec: stats.cpuSec,
      ...(stats.fallbackReason !== undefined ? { fallbackReason: stats.fallbackReason } : {}),
    },
  };
}

/** What the launch knows of a block before its state is set. */
export interface PrepareHint {
  /**
   * Bytes the block reads at most: its iteration budget at the samples per iteration and the bytes per sample seen so
   * far; absent or null before any iteration was seen.
   */
  expectedBytes?: number | null;
}

/** Page-cache control for a mode; tests pass FakeCacheState. */
export interface CacheState {
  /** Sets the state up for `mode` on `dataset`, just before the job starts (or the block is switched to). */
  prepare(mode: Mode, dataset: Dataset, hint?: PrepareHint): Promise<PreparedState>;
}
