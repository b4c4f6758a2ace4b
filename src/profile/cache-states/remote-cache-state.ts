// The cache states of remote data. The data is local when the job's own requests are answered from the profiler's copy
// of the objects: by the job's hook, inside its processes and above TLS (python/ds_analyzer/_serve.py), where the job
// reaches its origin directly; or by the metering proxy where the job goes through it (a cap, an added latency,
// --net-meter proxy, the held share of the overlap probe). Remote when every request goes to the origin (cold and
// synthetic). The copy is filled before the mode, from the source's listing, by fetches that bypass both.
import type { Mode } from '../../schema/events.js';
import type { Dataset, DatasetFile } from '../../system/dataset/dataset.js';
import type { MeteringProxy } from '../../system/network/metering-proxy.js';
import type { CacheState, PrepareHint, PreparedState } from './cache-state.js';
import type { FillOptions } from '../data-sources/remote-fill.js';

/** What a remote state needs of its source once the data is listed. */
export interface RemoteLink {
  proxy: MeteringProxy;
  /**
   * Stores the files' objects in the profiler's cache (those not stored yet); `options` default to the run's interrupt
   * and progress (RunBinding.bindRun).
   */
  fill(files: readonly DatasetFile[], options?: FillOptions): Promise<void>;
  /** The proxy's key for a file's requests. */
  keyOf(file: DatasetFile): string;
  /** Bytes of the files stored in the profiler's cache. */
  storedBytes(files: readonly DatasetFile[]): number;
  /** True when the job's hook answers the cached mode (the job reaches its origin directly, not through the proxy). */
  servesInJob(): boolean;
  /** Names the files the hook answers from (the copy's index); an empty list answers nothing. */
  writeIndex(files: readonly DatasetFile[]): void;
  /** The files the cached mode's copy holds: the whole dataset, or a part bounded by the disk and the block's reads. */
  copyFiles(dataset: Dataset, expectedBytes: number | null): readonly DatasetFile[];
  /** Says what the copy is, with the time its fetch has left at `bytesPerSec` (null: unknown). */
  announce(files: readonly DatasetFile[], dataset: Dataset, leftBytes: number, bytesPerSec: number | null): void;
}

// The copy's first part by bytes measures the rate its time left is said at (cached-subset.ts warms the same way).
const MEASURED_PART = 1 / 16;

/**
 * Fills the copy: its first part, then the line saying what it is and the time left, then the rest; that line is the
 * download's one announcement (its progress and its end are told as any download's).
 */
async function fillSaid(link: RemoteLink, files: readonly DatasetFile[], dataset: Dataset): Promise<void> {
  const missing = files.filter((f) => link.storedBytes([f]) === 0);
  const missingBytes = missing.reduce((sum, f) => sum + f.bytes, 0);
  if (missingBytes === 0) return;
  const first: DatasetFile[] = [];
  let firstBytes = 0;
  for (const f of missing) {
    if (first.length > 0 && firstBytes + f.bytes > missingBytes * MEASURED_PART) break;
    first.push(f);
    firstBytes += f.bytes;
  }
  const started = performance.now();
  await link.fill(first, { announced: true });
  const sec = (performance.now() - started) / 1000;
  link.announce(files, dataset, missingBytes - firstBytes, sec > 0 && firstBytes > 0 ? firstBytes / sec : null);
  await link.fill(files, { announced: true });
}

export class RemoteCacheState implements CacheState {
  constructor(
    /** The source's link, there once the data is listed. */
    private readonly link: () => RemoteLink,
    /** The files kept local in the cold mode (the overlap probe's held share); null: none. */
    private readonly held: readonly DatasetFile[] | null = null,
  ) {}

  async prepare(mode: Mode, dataset: Dataset, hint?: PrepareHint): Promise<PreparedState> {
    const link = this.link();
    if (mode === 'cached' && link.servesInJob()) {
      const local = link.copyFiles(dataset, hint?.expectedBytes ?? null);
      await fillSaid(link, local, dataset);
      link.writeIndex(local);
      return { residentBytesBefore: link.storedBytes(local), finish: async () => ({}) };
    }
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
