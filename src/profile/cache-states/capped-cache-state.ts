import type { Mode } from '../../schema/events.js';
import type { Dataset } from '../../system/dataset/dataset.js';
import { evict, residency } from '../../system/page-cache/page-cache.js';
import { requireCacheCap } from '../../system/keepers/cache-cap.js';
import type { CpuLedger } from '../../system/kernel/cpu-ledger.js';
import type { InotifyKeeper, ResidencyReading } from '../../system/keepers/inotify-keeper.js';
import { finishKeeper, type CacheState, type PreparedState } from './cache-state.js';

/**
 * validate's cache points: the dataset evicted once before the run, then capped at `capBytes` while the job runs
 * (src/system/keepers/cache-cap.ts): the cache fills over the first epoch up to the cap and stays there.
 */
export class CappedCacheState implements CacheState {
  private cap: InotifyKeeper | null = null;

  constructor(
    /** Dataset bytes the page cache may hold. */
    private readonly capBytes: number,
    /** The CPU ledger its work is charged to: the eviction as 'eviction', the cap as 'keeper'. */
    private readonly options: { ledger?: CpuLedger } = {},
  ) {}

  async prepare(_mode: Mode, dataset: Dataset): Promise<PreparedState> {
    const ledger = this.options.ledger;
    await evict(dataset.files, { sync: true, cpu: ledger?.account('eviction') });
    const before = await residency(dataset.files, undefined, { cpu: ledger?.account('eviction') });
    const cap = requireCacheCap(dataset.files, { capBytes: this.capBytes, ledger });
    this.cap = cap;
    return {
      residentBytesBefore: before.residentBytes,
      finish: async () => {
        this.cap = null;
        return finishKeeper(cap);
      },
    };
  }

  /** Whether the cap is running (between prepare and finish). */
  get capping(): boolean {
    return this.cap !== null;
  }

  /** The dataset's residency read through the running cap (see InotifyKeeper.readResidency), or null when none runs. */
  readResidency(sampleFiles: number): ResidencyReading | null {
    return this.cap?.readResidency(sampleFiles) ?? null;
  }
}
