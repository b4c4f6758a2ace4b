// The cache states of remote data. The data is local when the metering proxy
// answers the job's requests from the profiler's cache (cached mode, and the
// held share of the overlap probe), and remote when it sends every request to
// the origin (cold and synthetic). The cache is filled before the mode, from
// the source's listing, by fetches that bypass the proxy.
import type { Mode } from '../../schema/events.js';
import type { Dataset, DatasetFile } from '../../system/dataset/dataset.js';
import type { MeteringProxy } from '../../system/network/metering-proxy.js';
import type { CacheState, PreparedState } from './cache-state.js';
import type { FillOptions } from '../data-sources/remote-fill.js';

/** What a remote state needs of its source once the data is listed. */
export interface RemoteLink {
  proxy: MeteringProxy;
  /**
   * Stores the files' objects in the profiler's cache (those not stored yet); `options` default to the run's interrupt
   * and progress (DataSource.bindRun).
   */
  fill(files: readonly DatasetFile[], options?: FillOptions): Promise<void>;
  /** The proxy's key for a file's requests. */
  keyOf(file: DatasetFile): string;
  /** Bytes of the files stored in the profiler's cache. */
  storedBytes(files: readonly DatasetFile[]): number;
}

export class RemoteCacheState implements CacheState {
  constructor(
    /** The source's link, there once the data is listed. */
    private readonly link: () => RemoteLink,
    /** The files kept local in the cold mode (the overlap probe's held share); null: none. */
    private readonly held: readonly DatasetFile[] | null = null,
  ) {}

  async prepare(mode: Mode, dataset: Dataset): Promise<PreparedState> {
    const link = this.link();
    // A dataset larger than the room for the profiler's cache is not fetched into it: the cached mode then runs remote,
    // unproven (it does not fit).
    const local =
      mode === 'cached' ? (dataset.fitsInMemory ? dataset.files : []) : mode === 'cold' && this.held ? this.held : [];
    if (local.length > 0) await link.fill(local);
    link.proxy.setCacheUse(local.length > 0 ? 'serve' : 'pass', new Set(local.map((f) => link.keyOf(f))));
    return {
      residentBytesBefore: link.storedBytes(local),
      finish: async () => {
        link.proxy.setCacheUse('pass');
        return {};
      },
    };
  }
}
