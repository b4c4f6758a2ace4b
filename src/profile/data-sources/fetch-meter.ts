// Metering: what a source's meter reads over one run (DataSource.startMeter), the fetched bytes the proofs rest on.
import type { NetworkUse, ResourceSample } from '../../schema/profile.js';

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
  /** Variables the job's environment gets so that its reads go where they are metered (a proxy, its own clients). */
  jobEnv?: Record<string, string>;
  /** The job started: the root of its process tree. */
  attach(pid: number): void;
  /** Stops metering, its readings placed at `resources`, the run's samples. */
  finish(resources: readonly ResourceSample[]): FetchReadings | Promise<FetchReadings>;
}
