// Objects in an S3-compatible store or files at HTTP(S) URLs, read by the job's own client. Under the Python hook the
// job reaches its origin directly: its HTTP clients count the bytes (client-meter.ts) and, in the cached mode, the hook
// answers from the profiler's copy (python/ds_analyzer/_serve.py), so the modes can be blocks of one launch. A cap, an
// added latency, a held share or --net-meter proxy send the job through the metering proxy (network-meter.ts,
// cache-states/remote-cache-state.ts), a launch a mode. Cold: the network brought at least 90% of the consumed bytes;
// cached: (nearly) none.
import { statfsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ExitCode, UserError } from '../../errors.js';
import { formatBytes, percent as pct } from '../../units.js';
import { pickFiles, prefixEnd, seededOrder, sizesOf, sortedIndices } from '../../system/dataset/resident-subset.js';
import type { Mode } from '../../schema/events.js';
import { fileBytesQuantiles, type Dataset, type DatasetFile } from '../../system/dataset/dataset.js';
import { MeteringProxy } from '../../system/network/metering-proxy.js';
import { ResponseCache } from '../../system/network/response-cache.js';
import { remoteStore, type RemoteObject, type RemoteStore } from '../../system/network/remote-objects.js';
import type { RemoteSpec } from '../../system/network/remote-spec.js';
import type { ReadProber } from '../storage-probe.js';
import { RemoteCacheState, type RemoteLink } from '../cache-states/remote-cache-state.js';
import type { CacheState } from '../cache-states/cache-state.js';
import { withJobCache } from '../cache-states/job-cache-state.js';
import { startNetworkMeter } from './network-meter.js';
import { startClientMeter } from './client-meter.js';
import { countTarSamples } from '../../system/network/tar-samples.js';
import { tailQuantiles } from '../../quantile.js';
import type { DataSource } from './data-source.js';
import type { FetchMeter } from './fetch-meter.js';
import type { HeldShare } from './held-share.js';
import type { OneLaunch, OneLaunching } from './one-launch.js';
import type { DelaysRequests } from './request-delay.js';
import type { RunBinding, SourceRun } from './source-run.js';
import type { ReadThrottle, Throttle, Throttling } from './throttle.js';
import { fillCache, type FillOptions } from './remote-fill.js';
import type { DataSourceRecord } from '../../schema/profile.js';
import type { CpuLedger } from '../../system/kernel/cpu-ledger.js';

export interface RemoteOptions {
  /** Folder for the profiler's cache of the objects (under the profile's artefacts); emptied when the source closes. */
  cacheDir: string;
  /** Port of the metering proxy on 127.0.0.1 (0: any free one). */
  proxyPort: number;
  /** The CLI's environment: the job's proxy variables are derived from it. */
  env: NodeJS.ProcessEnv;
  /** The job's own cache folder (--job-cache): emptied and kept empty in the cold mode. */
  jobCache?: string | null;
  /**
   * Where the cold mode's requests are counted (--net-meter): 'client' (default), in the job's own HTTP clients (a
   * proxy carrying the bytes costs about a CPU core at 200 MB/s), or 'proxy'. Runs that need the proxy use it anyway.
   */
  netMeter?: NetMeter;
  /** Charged with the meters' readings, as 'meter' (the proxy's relaying is not charged). */
  ledger?: CpuLedger;
  /** --remote and --endpoint as the profile records them (no credentials); absent: the spec's display, no endpoint. */
  named?: { url: string; endpoint: string | null };
  /** Says a line on the terminal before a long step (the cached mode's copy); absent: nothing is said. */
  say?: (line: string) => void;
}

/** Where a remote source's cold mode is metered (--net-meter). */
export type NetMeter = 'client' | 'proxy';

// Bytes of the first tar shard read to count its samples.
const SHARD_SAMPLE_BYTES = 64 * 2 ** 20;
// Requests the network probe keeps in flight.
const PROBE_IN_FLIGHT = 16;
// Requests the network probe sends one at a time first: their first bytes wait behind no other response.
const PROBE_IDLE_REQUESTS = 3;
// The cache may take this share of the free space on its file system; the rest is left to the job and the profile.
const DISK_HEADROOM = 0.9;
// Seed of the permutation a bounded copy takes its objects from (the resident subset's, cached-subset.ts).
const COPY_SEED = 1;

const MESSAGES = {
  portTaken: (port: number) =>
    `--proxy-port ${port} is already taken on 127.0.0.1: pick another port, or omit --proxy-port to use any free one`,
  noObjects: (display: string) => `--remote ${display} holds no objects: check the bucket, prefix or URL`,
  tunnelled: (display: string) =>
    `${display} is served over https: the proxy sees encrypted tunnels, so it cannot answer the cached mode from ` +
    `its cache (the cached mode stays unproven) and counts bytes, not requests`,
  // Where the job goes through the proxy, each mode needs its own launch's variables.
  proxyMeterOwnLaunch:
    '--net-meter proxy: the job reaches its origin through the proxy, whose modes are set by variables given at ' +
    'each launch',
  proxyNeededOwnLaunch:
    'the cap or added latency runs at the proxy, which the job reaches through variables given at its launch: a ' +
    'launch a mode',
  cachedTunnelled:
    'the data is fetched over https, which the proxy cannot answer from its cache: the cached mode cannot be ' +
    'made local',
  noCapping:
    "validate's cache points cap the page cache, which remote data does not go through; validate remote data at " +
    'another --storage-bw instead',
  doesNotFit: (dataset: Dataset, free: number) =>
    `the dataset (${formatBytes(dataset.bytes)}) does not fit in the free space for the profiler's cache ` +
    `(${formatBytes(free)}): the cached mode cannot be made local; free space, or put the profile (--out) on a ` +
    `larger disk`,
  unlisted: 'the remote data is used before it was listed (a bug: please report it)',
  copying: (bytes: string, display: string, part: string, time: string) =>
    `cached mode: ${bytes} from ${display} (${part})${time}; removed when the profile ends`,
} as const;

/** Objects in an S3-compatible store or at HTTP(S) URLs, metered through a proxy on loopback. */
export class RemoteObjectsSource
  implements DataSource, Throttling, DelaysRequests, HeldShare, OneLaunching, RunBinding
{
  readonly modeState: CacheState;
  readonly readProber: ReadProber = (files, limits) => this.probe(files, limits);
  readonly whyNot = { cap: MESSAGES.noCapping };

  /** The job's hook answers the cached mode and its clients count: every mode is a block of one launch. */
  readonly oneLaunch: OneLaunch = {
    obstacle: () => {
      if ((this.options.netMeter ?? 'client') === 'proxy') return MESSAGES.proxyMeterOwnLaunch;
      return this.servesInJob() ? null : MESSAGES.proxyNeededOwnLaunch;
    },
  };

  /** One cap on the data's bytes from the origin, at the proxy: a remote source can always be throttled. */
  readonly throttle: ReadThrottle = {
    obstacle: () => null,
    start: async (_dataset, bytesPerSec) => {
      const proxy = this.requireLink().proxy;
      proxy.setBytesPerSec(bytesPerSec);
      return { wrap: (argv) => argv, remove: async () => proxy.setBytesPerSec(null) };
    },
  };
  private readonly store: RemoteStore;
  /** The run this source serves (bindRun): its interrupt and progress; null outside a profile. */
  private run: SourceRun | null = null;
  /** The rate of the source's own reads before a download (the tar shard's count), bytes/s, or null. */
  private ownRate: number | null = null;
  private link:
    | (RemoteLink & { proxy: MeteringProxy; cache: ResponseCache; objects: Map<string, RemoteObject> })
    | null = null;

  constructor(
    private readonly spec: RemoteSpec,
    private readonly options: RemoteOptions,
  ) {
    this.store = remoteStore(spec);
    this.modeState = this.withJobCache(new RemoteCacheState(() => this.requireLink()));
  }

  /** Samples in a tar shard (WebDataset), counted in the first shard's first 64 MiB and scaled to its size. */
  private async samplesPerShard(objects: RemoteObject[]): Promise<number | null> {
    if (!objects.every((o) => o.path.endsWith('.tar'))) return null;
    const started = performance.now();
    const counted = await countTarSamples((await this.store.fetch(objects[0])).body, SHARD_SAMPLE_BYTES);
    const sec = (performance.now() - started) / 1000;
    if (counted.bytesRead > 0 && sec > 0) this.ownRate = counted.bytesRead / sec;
    if (counted.samples === 0) return null;
    return counted.complete ? counted.samples : (counted.samples * objects[0].bytes) / counted.bytesRead;
  }

  /** Lists the objects, then starts the proxy the job will reach them through. */
  async list(): Promise<Dataset> {
    const objects = await this.store.list();
    if (objects.length === 0) throw new UserError(MESSAGES.noObjects(this.spec.display), ExitCode.MissingInput);
    if (!this.link) await this.open(objects);
    const sizes = objects.map((o) => o.bytes);
    const bytes = sizes.reduce((a, b) => a + b, 0);
    const free = freeBytes(this.options.cacheDir);
    // The proxy and its cache folder are up: a shard that cannot be read must not leave them behind.
    const samplesPerObject = await this.samplesPerShard(objects).catch(async (error: unknown) => {
      await this.close();
      throw error;
    });
    return {
      roots: [this.spec.display],
      files: objects.map((o) => ({ path: o.path, bytes: o.bytes })),
      bytes,
      meanFileBytes: bytes / objects.length,
      ...(samplesPerObject !== null ? { sampleBytes: bytes / objects.length / samplesPerObject } : {}),
      fileBytesQuantiles: fileBytesQuantiles(sizes),
      device: null,
      fitsInMemory: free !== null && bytes <= free * DISK_HEADROOM,
      memoryBudgetBytes: free === null ? null : Math.floor(free * DISK_HEADROOM),
      memoryBudgetSource: "free space for the profiler's cache of the objects",
      skippedEntries: 0,
      source: this.record(),
      remote: {
        kind: this.spec.kind,
        location: this.spec.display,
        protocol: this.spec.protocol,
        origins: this.spec.origins,
        cacheDir: this.options.cacheDir,
        samplesPerObject,
        jobCacheDir: this.options.jobCache ?? null,
      },
    };
  }

  /** The data as the profile records it: what validate opens again, credentials left to the environment. */
  private record(): DataSourceRecord {
    const { url, endpoint } = this.options.named ?? { url: this.spec.display, endpoint: null };
    const { jobCache = null, netMeter = 'client' } = this.options;
    return { kind: 'remote', fetchesFrom: 'network', url, endpoint, jobCache, netMeter };
  }

  /** The proxy variables every common client reads; the data's hosts are taken out of NO_PROXY. */
  private proxyEnv(): Record<string, string> {
    const url = this.requireLink().proxy.url;
    const noProxy = withoutHosts(this.options.env.NO_PROXY ?? this.options.env.no_proxy ?? '', this.spec.origins);
    return {
      HTTP_PROXY: url,
      HTTPS_PROXY: url,
      http_proxy: url,
      https_proxy: url,
      NO_PROXY: noProxy,
      no_proxy: noProxy,
    };
  }

  bindRun(run: SourceRun): void {
    this.run = run;
  }

  async close(): Promise<void> {
    const link = this.link;
    this.link = null;
    this.store.close();
    if (!link) return;
    await link.proxy.close();
    link.cache.clear();
  }

  warnings(dataset: Dataset, modes: readonly Mode[]): string[] {
    const warnings: string[] = [];
    if (this.spec.protocol === 'https' && !this.servesInJob()) warnings.push(MESSAGES.tunnelled(this.spec.display));
    else if (!dataset.fitsInMemory && modes.includes('cached') && !this.servesInJob())
      warnings.push(MESSAGES.doesNotFit(dataset, dataset.memoryBudgetBytes ?? 0));
    return warnings;
  }

  heldShareState(held: readonly DatasetFile[]): CacheState {
    return this.withJobCache(new RemoteCacheState(() => this.requireLink(), held));
  }

  /** The cold mode fetches every sample over the network: the job's own cache is emptied before and during it. */
  private withJobCache(state: CacheState): CacheState {
    return this.options.jobCache ? withJobCache(state, this.options.jobCache) : state;
  }

  /** Each request to the origin waits `sec` at the proxy before it leaves: a store that far away. */
  delayRequests(sec: number): Throttle {
    const proxy = this.requireLink().proxy;
    proxy.setAddedLatencyMs(sec * 1000);
    return { wrap: (argv) => argv, remove: async () => proxy.setAddedLatencyMs(0) };
  }

  /** Metered in the job's own HTTP clients where it serves in the job; else at the proxy, which the job is sent to. */
  startMeter(_mode: Mode, _dataset: Dataset, ownDirs: readonly string[]): FetchMeter {
    const proxy = this.requireLink().proxy;
    return this.servesInJob()
      ? startClientMeter(join(ownDirs[0], 'net'), this.spec.origins, this.options.ledger, this.copyIndex())
      : { ...startNetworkMeter(proxy, this.options.ledger), jobEnv: this.proxyEnv() };
  }

  proofLimit(mode: Mode): string | null {
    return mode === 'cached' && this.spec.protocol === 'https' && !this.servesInJob() ? MESSAGES.cachedTunnelled : null;
  }

  /** Whether the job's own clients count and its hook answers: --net-meter client, and nothing set at the proxy. */
  private servesInJob(): boolean {
    return (this.options.netMeter ?? 'client') === 'client' && (this.link?.proxy.passesThrough ?? true);
  }

  /** The copy's index the job's hook reads (DSA_NET_COPY). */
  private copyIndex(): string {
    return join(this.options.cacheDir, 'index.json');
  }

  private async open(objects: RemoteObject[]): Promise<void> {
    let proxy: MeteringProxy;
    const cache = new ResponseCache(this.options.cacheDir);
    try {
      proxy = await MeteringProxy.start({
        port: this.options.proxyPort,
        dataOrigins: this.spec.origins,
        bytesPerSec: null,
        cache,
        cacheUse: 'pass',
      });
    } catch (error) {
      cache.clear();
      if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE')
        throw new UserError(MESSAGES.portTaken(this.options.proxyPort), ExitCode.Environment);
      throw error;
    }
    const byPath = new Map(objects.map((o) => [o.path, o]));
    const objectOf = (file: DatasetFile) =>
      byPath.get(file.path) ?? { path: file.path, bytes: file.bytes, cacheKey: file.path };
    this.link = {
      proxy,
      cache,
      objects: byPath,
      keyOf: (file) => objectOf(file).cacheKey,
      storedBytes: (files) => files.reduce((sum, f) => sum + (cache.get(objectOf(f).cacheKey)?.bytes ?? 0), 0),
      fill: (files, options) =>
        this.fill(
          files.map(objectOf).filter((o) => cache.get(o.cacheKey) === null),
          cache,
          options,
        ),
      servesInJob: () => this.servesInJob(),
      writeIndex: (files) =>
        cache.writeIndex(
          this.copyIndex(),
          files.map((f) => objectOf(f).cacheKey),
        ),
      copyFiles: (dataset, expectedBytes) => copyFiles(dataset, expectedBytes),
      announce: (files, dataset, leftBytes, bytesPerSec) =>
        this.options.say?.(copyLine(this.spec.display, files, dataset, leftBytes, bytesPerSec)),
    };
  }

  /** Fetches the objects into the cache, under the run's interrupt and progress unless `options` say otherwise. */
  private fill(objects: RemoteObject[], cache: ResponseCache, options: FillOptions = {}): Promise<void> {
    const run = this.run;
    const signal = options.signal ?? run?.signal;
    const onProgress = options.onProgress ?? run?.onDownload;
    return fillCache(
      this.store,
      objects,
      cache,
      { source: this.spec.display, rateBytesPerSec: run?.rateBytesPerSec?.() ?? this.ownRate },
      { ...(signal ? { signal } : {}), ...(onProgress ? { onProgress } : {}), announced: options.announced === true },
    );
  }

  /**
   * The network's pace for the storage probe: a few objects one at a time first (their first bytes wait behind nothing:
   * the latency), then many at once (the bandwidth); on a full link first bytes wait behind each other's bytes, which
   * is the bandwidth's wait, not latency (whatif/fit/storage.ts).
   */
  private async probe(files: readonly { path: string }[], limits: Parameters<ReadProber>[1]) {
    const link = this.requireLink();
    // A failed or stalled request ends the others at once, as does the user's interrupt.
    const all = new AbortController();
    const signal = this.run ? AbortSignal.any([this.run.signal, all.signal]) : all.signal;
    let next = 0;
    const fetchNext = async (firstBytes: number[]): Promise<number | null> => {
      for (let k = next++; k < files.length; k = next++) {
        const object = link.objects.get(files[k].path);
        if (!object) continue;
        const asked = performance.now();
        const { body } = await this.store.fetch(object, { signal });
        let bytes = 0;
        for await (const chunk of body) {
          if (bytes === 0) firstBytes.push(performance.now() - asked);
          bytes += (chunk as Buffer).length;
        }
        return bytes;
      }
      return null;
    };
    const idleFirstBytes: number[] = [];
    for (let k = 0; k < PROBE_IDLE_REQUESTS && next < files.length - 1; k++) await fetchNext(idleFirstBytes);
    const started = performance.now();
    let bytesRead = 0;
    let fetched = 0;
    const firstBytes: number[] = [];
    const worker = async () => {
      while (bytesRead < limits.maxBytes && (performance.now() - started) / 1000 <= limits.maxSec) {
        const bytes = await fetchNext(firstBytes);
        if (bytes === null) return;
        bytesRead += bytes;
        fetched++;
      }
    };
    // Many requests at once: what the network carries, not what one request's latency allows.
    const concurrency = Math.min(files.length, Math.max(limits.concurrency, PROBE_IN_FLIGHT));
    // Every request has ended before the probe answers: a failure's reason is the abort's.
    await Promise.allSettled(Array.from({ length: concurrency }, () => worker().catch((error) => all.abort(error))));
    if (signal.aborted) throw signal.reason;
    const sec = (performance.now() - started) / 1000;
    // Each request is a whole object's GET: their mean size, in whole bytes (objects of mixed sizes give a fraction).
    const requestBytes = fetched > 0 ? Math.max(1, Math.round(bytesRead / fetched)) : limits.requestBytes;
    // The median wait for a first byte: what the probe's rate owes to latency, not bandwidth (whatif/fit/storage.ts).
    const firstByteMs = tailQuantiles(firstBytes)?.p50;
    const idleFirstByteMs = tailQuantiles(idleFirstBytes)?.p50;
    return {
      bytesRead,
      storageBytes: bytesRead,
      files: fetched,
      sec,
      bytesPerSec: sec > 0 ? bytesRead / sec : 0,
      concurrency,
      requestBytes,
      ...(firstByteMs !== undefined ? { firstByteMs } : {}),
      ...(idleFirstByteMs !== undefined ? { idleFirstByteMs } : {}),
    };
  }

  private requireLink() {
    if (!this.link) throw new Error(MESSAGES.unlisted);
    return this.link;
  }
}

/**
 * The objects the cached mode's copy holds: all that fit the room and the block's expected reads, else the first of a
 * seeded permutation (the hook answers a request for another object with one of these).
 */
function copyFiles(dataset: Dataset, expectedBytes: number | null): DatasetFile[] {
  const room = dataset.memoryBudgetBytes ?? dataset.bytes;
  const target = Math.min(dataset.bytes, room, expectedBytes ?? Infinity);
  if (target >= dataset.bytes) return dataset.files;
  const order = seededOrder(dataset.files.length, COPY_SEED);
  const end = Math.max(1, prefixEnd(order, sizesOf(dataset.files), 0, 0, target));
  return pickFiles(dataset.files, sortedIndices(order, 0, end));
}

/** What the cached mode's copy is and what is left of its fetch, said once its first part measured the rate. */
function copyLine(
  display: string,
  files: readonly DatasetFile[],
  dataset: Dataset,
  missingBytes: number,
  bytesPerSec: number | null,
): string {
  const bytes = files.reduce((sum, f) => sum + f.bytes, 0);
  const part =
    files.length === dataset.files.length
      ? `all ${files.length} objects`
      : `a seeded ${pct(bytes / dataset.bytes)} of the objects (${files.length} of ${dataset.files.length}), ` +
        'what the block reads and the disk holds';
  const time = bytesPerSec ? `, about ${Math.ceil(missingBytes / bytesPerSec)} s left at the rate measured` : '';
  return MESSAGES.copying(formatBytes(bytes), display, part, time);
}

/** Free bytes on the file system that will hold `dir` (its nearest existing parent), or null. */
function freeBytes(dir: string): number | null {
  for (let at = dir; ; at = dirname(at)) {
    try {
      const stats = statfsSync(at);
      return stats.bavail * stats.bsize;
    } catch {
      if (dirname(at) === at) return null;
    }
  }
}

/** A NO_PROXY list without the entries that would send the data's hosts around the proxy. */
export function withoutHosts(noProxy: string, origins: readonly string[]): string {
  const hosts = origins.map((o) => o.slice(0, o.lastIndexOf(':')));
  const loopback = hosts.some((h) => h === '127.0.0.1' || h === 'localhost' || h === '::1');
  const bypasses = (entry: string) => {
    const name = entry.replace(/:\d+$/, '').replace(/^\*?\./, '');
    if (entry === '*') return true;
    if (loopback && ['localhost', '127.0.0.1', '::1', '127.0.0.0/8'].includes(name)) return true;
    return hosts.some((h) => h === name || h.endsWith(`.${name}`));
  };
  return noProxy
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '' && !bypasses(e))
    .join(',');
}
