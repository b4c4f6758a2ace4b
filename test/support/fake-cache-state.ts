import type { Mode } from '../../src/schema/events.js';
import type { Dataset } from '../../src/system/dataset/dataset.js';
import type { CacheState, PreparedState, StateFinish } from '../../src/profile/cache-states/cache-state.js';

/** What FakeCacheState reports. */
export interface FakeCacheStateOptions {
  /** Bytes resident before each mode's job starts, as a fraction of the dataset (default 0). */
  residentShare?: Partial<Record<Mode, number>>;
  /** Counters each finish() returns (default none). */
  finish?: StateFinish;
}

/** One prepare() of a FakeCacheState. */
export interface FakeCachePrepare {
  /** The mode it was prepared for. */
  mode: Mode;
  /** Bytes of the dataset it was given. */
  datasetBytes: number;
  /** Whether finish() was called since. */
  finished: boolean;
}

/**
 * A deterministic cache state: it touches no page cache, says the dataset was
 * as resident as it is told, and records each prepare() and whether it was
 * finished, so a test can check that every run sets its state up and undoes it.
 */
export class FakeCacheState implements CacheState {
  /** Every prepare(), in order. */
  readonly prepared: FakeCachePrepare[] = [];

  constructor(private readonly options: FakeCacheStateOptions = {}) {}

  async prepare(mode: Mode, dataset: Dataset): Promise<PreparedState> {
    const record: FakeCachePrepare = { mode, datasetBytes: dataset.bytes, finished: false };
    this.prepared.push(record);
    return {
      residentBytesBefore: Math.round((this.options.residentShare?.[mode] ?? 0) * dataset.bytes),
      finish: async () => {
        record.finished = true;
        return this.options.finish ?? {};
      },
    };
  }
}
