// A held share, a source's capability: part of the data kept cached and the rest cold (profile --overlap).
import type { DatasetFile } from '../../system/dataset/dataset.js';
import type { CacheState } from '../cache-states/cache-state.js';

/** A source that can hold a share cached; absent, the overlap probe cannot run. */
export interface HeldShare {
  /** `held` kept cached and the rest cold. */
  heldShareState(held: readonly DatasetFile[]): CacheState;
}
