// A cache of its own, a source's capability: the data's cache held at a size (validate's cache points).
import type { ResidencyReading } from '../../system/keepers/inotify-keeper.js';
import type { CacheState } from '../cache-states/cache-state.js';
import type { DataSource } from './data-source.js';

/** A cache state held at a size while the job runs, which can say what it holds (validate's cache points). */
export interface CappedState extends CacheState {
  /** Whether the cap is running (between prepare and finish). */
  readonly capping: boolean;
  /** The data's residency now, reading at most `sampleFiles` files of each group; null when no cap runs. */
  readResidency(sampleFiles: number): ResidencyReading | null;
}

/** Caps the data's cache at a size. */
export interface CacheCap {
  /** Why a cache cannot be capped and measured on this machine, or null when it can. */
  obstacle(): string | null;
  /** The capped state at `capBytes`. */
  state(capBytes: number): CappedState;
}

/** A source whose cache can be capped; absent, whyNot.cap says why. */
export interface Capping {
  readonly cap: CacheCap;
}

/** Why the cache of `source` cannot be capped and measured on this machine, or null when it can. */
export function capObstacle(source: Partial<Capping> & Pick<DataSource, 'whyNot'>): string | null {
  return source.cap ? source.cap.obstacle() : (source.whyNot?.cap ?? 'this data source cannot cap its cache');
}
