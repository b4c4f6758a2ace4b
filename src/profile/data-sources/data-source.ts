// Where a job's samples come from: one interface that profile, validate and the overlap probe speak to, so the data
// path is chosen once (open-data-source.ts) and never named in the runs. Every source answers a core of eight members;
// what some cannot do is an optional capability, its absence said in `whyNot`. The sources: local files
// (local-files.ts), files on FUSE (fuse-files.ts) or NFS (nfs-files.ts), remote objects (remote-objects.ts); the fake
// is test/support/fake-data-source.ts.
import type { Mode } from '../../schema/events.js';
import type { NetworkUse, ResourceSample } from '../../schema/profile.js';
import type { Dataset, DatasetFile } from '../../system/dataset/dataset.js';
import type { ResidencyReading } from '../../system/keepers/inotify-keeper.js';
import type { ReadProber } from '../storage-probe.js';
import type { CacheState } from '../cache-states/cache-state.js';

/** How far a source's download (remote data's cached mode) has come. */
export interface DownloadProgress {
  /** The data as messages name it: no credentials, no query. */
  source: string;
  /** Objects and bytes to fetch. */
  objects: number;
  bytesTotal: number;
  /** Bytes fetched so far. */
  bytesDone: number;
  /** Seconds since the download started. */
  elapsedSec: number;
  /** Seconds the whole download should take at the rate measured before it; null where none was. */
  estimateSec: number | null;
  /** 'start' before the first request, 'running' while it runs, 'done' once every object is stored. */
  phase: 'start' | 'running' | 'done';
}

/** What a run tells its source about itself (DataSource.bindRun). */
export interface SourceRun {
  /** Aborted at the user's interrupt: the source's own network waits stop at once. */
  signal: AbortSignal;
  /** Told how a download of the source's comes on, about once a second. */
  onDownload?: (progress: DownloadProgress) => void;
  /** The data's rate over the network measured so far (the cold mode's), bytes/s, or null. */
  rateBytesPerSec?: () => number | null;
}

/** A reading of a cumulative counter of fetched bytes. */
export interface CounterReading {
  /** ms since the epoch. */
  t: number;
  /** Bytes fetched from storage (or the network) since the counter started, never decreasing. */
  bytes: number;
  /** Requests for the data since the counter started, where the meter counts them (the proxy, the job's clients). */
  requests?: number;
  /** Of them, the failed ones (no answer, a reset, a timeout), where the meter counts them. */
  failures?: number;
  /** Bytes the job's hook answered from the local copy (python/ds_analyzer/_serve.py), never in `bytes`. */
  localBytes?: number;
}

/** Reads a fetch counter may include that are not the data's (files the job read outside --data). */
export interface OtherReads {
  /** Their bytes (an upper bound: file sizes). */
  bytes: number;
  /** The note naming them, for the proof's reason. */
  note: string;
}

/** What a run's meter read, once the job's tree is reaped. */
export interface FetchReadings {
  /** The cumulative fetched bytes at each resource sample (at their times): the measured window's evidence. */
  series: CounterReading[];
  /** How the series was measured, named in the proof. */
  seriesSource: string;
  /** Bytes fetched over the whole run, for when the series does not cover the measured window; null when unreadable. */
  wholeRunBytes: number | null;
  /** How wholeRunBytes was measured, or why it could not be. */
  wholeRunSource: string;
  /**
   * Reads counted in the series that may not be the data's, among those still open at `sinceMs` (ms since the epoch),
   * first seen by `untilMs` and seen open outside the `aside` spans (the training loader idle between epochs); null
   * when none.
   */
  otherReads(
    sinceMs: number,
    aside?: readonly { startMs: number; endMs: number }[],
    untilMs?: number,
  ): OtherReads | null;
  /** Remote data: what the run fetched over the network (requests, latency, in flight); absent for local files. */
  network?: NetworkUse;
  /** What the job fetched in one block of one launch (its processes tag each count with its block). */
  networkOfBlock?(block: number, fromMs: number, toMs: number): NetworkUse;
  /** How networkOfBlock counted, named in a block's proof. */
  blockSource?: string;
  /** True when the series is the source's own counter, not read_bytes (kept as ResourceSample.fetchedBytes). */
  ownCounter?: boolean;
  /** Why these readings cannot prove the run's state whatever they say (a meter that saw none of the traffic). */
  proofLimit?: string;
}

/** Meters one run's fetched bytes: started before the job, finished after its tree is reaped. */
export interface FetchMeter {
  /** Variables the job needs for this meter, in place of the source's jobEnv() (its own clients count). */
  jobEnv?: Record<string, string>;
  /** The job started: the root of its process tree. */
  attach(pid: number): void;
  /** Stops metering, its readings placed at `resources`, the run's samples. */
  finish(resources: readonly ResourceSample[]): FetchReadings | Promise<FetchReadings>;
}

/** A cache state held at a size while the job runs, which can say what it holds (validate's cache points). */
export interface CappedState extends CacheState {
  /** Whether the cap is running (between prepare and finish). */
  readonly capping: boolean;
  /** The data's residency now, reading at most `sampleFiles` files of each group; null when no cap runs. */
  readResidency(sampleFiles: number): ResidencyReading | null;
}

/** A throttle of the data's read bandwidth, set up for a run of jobs. */
export interface Throttle {
  /** The job's argv, wrapped to run under the throttle. */
  wrap(argv: string[]): string[];
  /** Removes the throttle once its jobs have ended. */
  remove(): Promise<void>;
}

/** Where the data's bytes come from when they are not cached here, as the proofs name it. */
export type FetchOrigin = 'storage' | 'network';

/** Throttles the data's reads (--storage-bw: profile's cold mode, validate's bandwidth points). */
export interface ReadThrottle {
  /** Why reads cannot be throttled on this machine now (`env` names a delegated cgroup), or null when they can. */
  obstacle(env: NodeJS.ProcessEnv): string | null;
  /** Throttles reads of `dataset` (`name` tells its groups apart); a UserError when it cannot be throttled. */
  start(dataset: Dataset, bytesPerSec: number, name: string, env: NodeJS.ProcessEnv): Promise<Throttle>;
}

/** Caps the data's cache at a size that fills as the job reads (validate's cache points). */
export interface CacheCap {
  /** Why a cache cannot be capped and measured on this machine, or null when it can. */
  obstacle(): string | null;
  /** The capped state at `capBytes`. */
  state(capBytes: number): CappedState;
}

/** Sets the modes' states under one running launch of the job (docs/method.md, "One launch"). */
export interface OneLaunch {
  /** Why these modes on this dataset still need a launch each, or null when they can be blocks of one. */
  obstacle(dataset: Dataset, modes: readonly Mode[]): string | null;
}

/** The optional capabilities of a source, by name: where one is absent, `whyNot` says why. */
export type Capability = 'throttle' | 'cap' | 'delayRequests' | 'heldShare' | 'oneLaunch';

/** The data a job reads: the first eight members always; after the blank line capabilities, absent where it cannot. */
export interface DataSource {
  /** Where uncached bytes come from: 'storage' (this machine's disks) or 'network' (remote data, network mounts). */
  readonly fetchesFrom: FetchOrigin;
  /** Lists the data once, before anything runs, with the source's record of itself (Dataset.source). */
  list(): Promise<Dataset>;
  /** Releases what the source holds (a proxy, its cache, a counter); called once every run has ended, failed or not. */
  close(): Promise<void>;
  /** What limits the proofs on this data, said before anything runs. */
  warnings(dataset: Dataset, modes: readonly Mode[]): string[];
  /** The state of each of the three modes (synthetic, cached, cold). */
  readonly modeState: CacheState;
  /** Starts metering the fetched bytes of one run of `mode`; `ownDirs` hold the profiler's own files of the run. */
  startMeter(mode: Mode, dataset: Dataset, ownDirs: readonly string[]): FetchMeter;
  /** Why `mode` cannot be proven on this data whatever its readings say, or null. */
  proofLimit(mode: Mode, dataset: Dataset): string | null;
  /** Reads a sample of the data cold for the storage probe. */
  readonly readProber: ReadProber;

  /** Ties the source's own network waits (a download before a mode) to the run; absent: a source with none. */
  bindRun?(run: SourceRun): void;
  /** Variables the job's environment gets so that its reads go where they are metered (a proxy); absent: none. */
  jobEnv?(): Record<string, string | undefined>;
  /** `held` kept cached and the rest cold (profile --overlap); absent: the overlap probe cannot run. */
  heldShareState?(held: readonly DatasetFile[]): CacheState;
  /** Throttles the data's reads; absent: they cannot be (whyNot.throttle). */
  readonly throttle?: ReadThrottle;
  /** Caps the data's cache (validate's cache points); absent: it cannot be (whyNot.cap). */
  readonly cap?: CacheCap;
  /** Delays every request to the origin by `sec` (validate's latency points) until its remove; absent: cannot. */
  delayRequests?(sec: number): Throttle;
  /** Sets the modes under one running launch; absent: a launch each (whyNot.oneLaunch says why). */
  readonly oneLaunch?: OneLaunch;
  /** Why each absent capability is absent, in the words users see; one absent from here too gets generic words. */
  readonly whyNot?: Partial<Record<Capability, string>>;
}

type ThrottleOwner = Pick<DataSource, 'throttle' | 'whyNot'>;

// Said where a source lacks a capability and does not say why in its whyNot.
const NO_CAPABILITY = {
  throttle: 'this data source cannot throttle its reads',
  cap: 'this data source cannot cap its cache',
} as const;

/** Why reads of `source` cannot be throttled on this machine now, or null when they can. */
export function throttleObstacle(source: ThrottleOwner, env: NodeJS.ProcessEnv): string | null {
  return source.throttle ? source.throttle.obstacle(env) : (source.whyNot?.throttle ?? NO_CAPABILITY.throttle);
}

/** Why the cache of `source` cannot be capped and measured on this machine, or null when it can. */
export function capObstacle(source: Pick<DataSource, 'cap' | 'whyNot'>): string | null {
  return source.cap ? source.cap.obstacle() : (source.whyNot?.cap ?? NO_CAPABILITY.cap);
}
