/** What every cold keeper (and cache cap) is and reports, whichever mechanism runs it. */

/** How a keeper learns what to evict. */
export type KeeperMechanism = 'fanotify' | 'inotify' | 'scan';

/** Counters of a cold keeper, returned by stop(). */
export interface ColdKeeperStats {
  /** The mechanism that ran. */
  mechanism: KeeperMechanism;
  /** Why no event-driven keeper could be used, when the keeper fell back to scanning. */
  fallbackReason?: string;
  /** CPU seconds of the keeper's own work (on the thread CPU clock where available), setup excluded. */
  cpuSec: number;
  /** Wall seconds of the synchronous setup before the job starts (watching directories, indexing paths). */
  setupSec: number;
  /** Evictions after the initial one: a file counts once per close (inotify) or per sweep that evicted pages of it. */
  reEvictions: number;
  /** Bytes advised out by those evictions (fanotify's closes not counted: a size would cost a call per file). */
  reEvictedBytes: number;
  /** Whole-file evictions of files whose residency mincore cannot show to this user (see page-sweep.ts). */
  blindEvictions: number;
  /** Per-file failures (vanished, unreadable, mincore/fadvise errors) and failed reads of the event queue. */
  errors: number;
  /** The last failure, as 'path: CODE', if any. */
  lastError?: string;
  /** scan: completed scans over all files; fanotify, inotify: sweeps of the files held open. */
  sweeps: number;
  /** scan: the interval in force at the end (intervalMs, or longer when scans were slow). */
  effectiveIntervalMs?: number;
  /** fanotify, inotify: what the event-driven keeper saw and did. */
  events?: EventKeeperStats;
}

/** Counters of an event-driven keeper (fanotify or inotify). */
export interface EventKeeperStats {
  /** Directories watched (inotify) or marked (fanotify). */
  watchedDirs: number;
  /** Close events of dataset files by others than the keeper. */
  closeEvents: number;
  /** Files evicted whole because they were closed. */
  closeEvictions: number;
  /** Files being read and not closed that a sweep evicted pages of (a file counts once per sweep). */
  sweepEvictions: number;
  /** Times the event queue overflowed (events lost). */
  queueOverflows: number;
  /** Files evicted whole by the sweeps that follow an overflow. */
  overflowSweptFiles: number;
  /** inotify: watches the kernel removed (a directory deleted or unmounted). */
  lostWatches: number;
  /** Cache cap: residency readings taken through the keeper (their CPU is in cpuSec). */
  residencyReadings?: number;
}

/** A running cold keeper. */
export interface ColdKeeper {
  /** The mechanism running. */
  readonly mechanism: KeeperMechanism;
  /** Does the keeper's periodic work now (a drain and sweep, or a scan); for tests and a final sweep. */
  scanNow(): Promise<void>;
  /** Stops the timers, waits for work in progress to end, and returns the counters. */
  stop(): Promise<ColdKeeperStats>;
}

/** A keeper's counters before it has done anything. */
export function emptyKeeperStats(mechanism: KeeperMechanism): ColdKeeperStats {
  return {
    mechanism,
    cpuSec: 0,
    setupSec: 0,
    reEvictions: 0,
    reEvictedBytes: 0,
    blindEvictions: 0,
    errors: 0,
    sweeps: 0,
  };
}
