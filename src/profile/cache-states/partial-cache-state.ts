import type { Mode } from '../../schema/events.js';
import type { Dataset, DatasetFile } from '../../system/dataset/dataset.js';
import { evict, residency, warm } from '../../system/page-cache/page-cache.js';
import { startColdKeeper } from '../../system/keepers/cold-keeper.js';
import type { CpuLedger } from '../../system/kernel/cpu-ledger.js';
import { finishKeeper, type CacheState, type PreparedState } from './cache-state.js';

/**
 * Holds the chosen files resident and keeps the others cold: everything is evicted, the chosen files are read in, and
 * the cold keeper watches only the rest. A cache that never evicts (MinIO-like), so the hit ratio is the share.
 */
export class PartialCacheState implements CacheState {
  constructor(
    /** The files held resident (overlap-probe.ts residentSubset). */
    private readonly resident: readonly DatasetFile[],
    /**
     * Cold keeper scan period (ms), parallel readers of the warm-up, and the CPU ledger its work is charged to
     * (eviction, warming, keeper).
     */
    private readonly options: { coldKeeperIntervalMs: number; warmConcurrency: number; ledger?: CpuLedger },
  ) {}

  async prepare(_mode: Mode, dataset: Dataset): Promise<PreparedState> {
    const ledger = this.options.ledger;
    await evict(dataset.files, { sync: true, cpu: ledger?.account('eviction') });
    await warm(this.resident, { concurrency: this.options.warmConcurrency, cpu: ledger?.account('warming') });
    const before = await residency(dataset.files, undefined, { cpu: ledger?.account('eviction') });
    const held = new Set(this.resident.map((f) => f.path));
    const keeper = startColdKeeper(
      dataset.files.filter((f) => !held.has(f.path)),
      // The held share sits in the same directories: it must not be evicted with the rest.
      { intervalMs: this.options.coldKeeperIntervalMs, onlyListed: true, ledger },
    );
    return { residentBytesBefore: before.residentBytes, finish: () => finishKeeper(keeper) };
  }
}
