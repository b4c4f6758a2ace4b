// Where a job's samples come from: one interface that profile, validate and the overlap probe speak to, the source
// chosen once (open-data-source.ts). Every source answers the core below; what some can do beyond it is a capability
// in a module of its own (throttle.ts, cache-cap.ts, request-delay.ts, held-share.ts, one-launch.ts, source-run.ts),
// checked where it is used. The fake is test/support/fake-data-source.ts.
import type { Mode } from '../../schema/events.js';
import type { Dataset } from '../../system/dataset/dataset.js';
import type { ReadProber } from '../storage-probe.js';
import type { CacheState } from '../cache-states/cache-state.js';
import type { Capping } from './cache-cap.js';
import type { FetchMeter } from './fetch-meter.js';
import type { HeldShare } from './held-share.js';
import type { OneLaunching } from './one-launch.js';
import type { DelaysRequests } from './request-delay.js';
import type { RunBinding } from './source-run.js';
import type { Throttling } from './throttle.js';

/** Where the data's bytes come from when they are not cached here: each source writes it in its record. */
export type FetchOrigin = 'storage' | 'network';

/** The data a job reads: the seven members every source answers, and why a capability it lacks is absent. */
export interface DataSource {
  /** Lists the data once, before anything runs, with its record of itself and its fetch place (Dataset.source). */
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
  /** Why a cap or one launch is absent, in the words users see; any other absence is said in its caller's words. */
  readonly whyNot?: { readonly cap?: string; readonly oneLaunch?: string };
}

/** A source as opened: the core, and whichever capabilities it has. */
export type OpenedSource = DataSource &
  Partial<Throttling & Capping & DelaysRequests & HeldShare & OneLaunching & RunBinding>;
