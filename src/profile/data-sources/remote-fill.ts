// The cached mode's download of remote objects into the profiler's cache: a few requests at once, each under the
// store's deadlines; a failed or stalled one, or the user's interrupt, ends every other at once (nothing runs on in the
// background), and its progress is told about once a second.
import type { RemoteObject, RemoteStore } from '../../system/network/remote-objects.js';
import type { ResponseCache } from '../../system/network/response-cache.js';
import type { DownloadProgress } from './source-run.js';

/** How a fill runs: what may end it, and who is told how it comes on. */
export interface FillOptions {
  /** Ends the download at once: the requests in flight are destroyed, and the fill rejects with its reason. */
  signal?: AbortSignal;
  /** Told at the start, about once a second while the bytes come, and at the end. */
  onProgress?: (progress: DownloadProgress) => void;
  /** True when the caller said what the download is (the cached mode's copy line): no start is told. */
  announced?: boolean;
}

/** Requests in flight: enough to fill a link whose round trip is longer than one object's transfer. */
const FILL_CONCURRENCY = 8;
/** How often the progress is told while the bytes come. */
const PROGRESS_EVERY_MS = 1000;

/** Fetches `objects` into `cache`; `what` names the data and the rate (null: unknown) the estimate is from. */
export async function fillCache(
  store: RemoteStore,
  objects: readonly RemoteObject[],
  cache: ResponseCache,
  what: { source: string; rateBytesPerSec: number | null },
  options: FillOptions = {},
): Promise<void> {
  const bytesTotal = objects.reduce((sum, o) => sum + o.bytes, 0);
  const started = performance.now();
  let bytesDone = 0;
  const tell = (phase: DownloadProgress['phase']) =>
    options.onProgress?.({
      source: what.source,
      objects: objects.length,
      bytesTotal,
      bytesDone,
      elapsedSec: (performance.now() - started) / 1000,
      estimateSec: what.rateBytesPerSec ? bytesTotal / what.rateBytesPerSec : null,
      phase,
    });
  if (!options.announced) tell('start');
  // One failure ends the rest: their requests are destroyed with its error, not left to run.
  const all = new AbortController();
  const onAbort = () => all.abort(options.signal!.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  const ticker = setInterval(() => tell('running'), PROGRESS_EVERY_MS);
  let next = 0;
  const worker = async () => {
    for (let k = next++; k < objects.length && !all.signal.aborted; k = next++) {
      const fetched = await store.fetch(objects[k], { signal: all.signal, onBytes: (n) => (bytesDone += n) });
      await cache.put(objects[k].cacheKey, fetched.headers, fetched.body);
    }
  };
  // Every request has ended (its partial file removed) before the fill answers: nothing writes into the cache after.
  await Promise.allSettled(
    Array.from({ length: Math.min(FILL_CONCURRENCY, objects.length) }, () =>
      worker().catch((error: unknown) => all.abort(error)),
    ),
  );
  clearInterval(ticker);
  options.signal?.removeEventListener('abort', onAbort);
  if (all.signal.aborted) throw all.signal.reason;
  tell('done');
}
