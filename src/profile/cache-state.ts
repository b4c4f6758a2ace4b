import type { Mode } from '../schema/events.js';
import type { Dataset } from '../system/dataset.js';
import { dropCachesGlobally, evict, residency, warm } from '../system/page-cache.js';
import { startColdKeeper } from '../system/cold-keeper.js';

/** A cache state set up for one mode; finish() undoes what must not outlive the mode. */
export interface PreparedState {
  /** Dataset bytes resident in the page cache just before the job starts. */
  residentBytesBefore: number;
  /** Ends the state (stops the cold keeper); returns its counters. */
  finish(): Promise<{ reEvictions?: number }>;
}

/** Page-cache control for the three modes; tests pass a fake. */
export interface CacheState {
  prepare(mode: Mode, dataset: Dataset): Promise<PreparedState>;
}

export interface PageCacheStateOptions {
  /** Use the global drop_caches instead of per-file eviction (root only). */
  dropCaches: boolean;
  /** Cold keeper scan period, ms. */
  coldKeeperIntervalMs: number;
  /** Parallel readers for the warm-up. */
  warmConcurrency: number;
}

/**
 * The real page-cache state: cached warms every file and checks residency;
 * cold evicts the dataset's files (not the whole machine's cache: the
 * framework's own libraries would then be re-read, and throttled, as job I/O)
 * and keeps it cold with a keeper while the job reads it again in later epochs.
 */
export class PageCacheState implements CacheState {
  constructor(private readonly options: PageCacheStateOptions) {}

  async prepare(mode: Mode, dataset: Dataset): Promise<PreparedState> {
    if (mode === 'cached') await warm(dataset.files, { concurrency: this.options.warmConcurrency });
    if (mode === 'cold') {
      if (this.options.dropCaches) await dropCachesGlobally();
      else await evict(dataset.files, { sync: true });
    }
    const before = await residency(dataset.files);
    if (mode !== 'cold') return { residentBytesBefore: before.residentBytes, finish: async () => ({}) };
    const keeper = startColdKeeper(dataset.files, { intervalMs: this.options.coldKeeperIntervalMs });
    return {
      residentBytesBefore: before.residentBytes,
      finish: async () => ({ reEvictions: (await keeper.stop()).reEvictions }),
    };
  }
}
