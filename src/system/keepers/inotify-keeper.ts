// The event-driven cold keeper: evict what the job has just finished reading.
//
// Every directory holding dataset files is watched (inotify-events.ts: the
// watches, the queue, the keeper's own opens told apart from the job's). When
// a dataset file is closed (IN_CLOSE_NOWRITE), the keeper drops the whole file
// with posix_fadvise(DONTNEED): the job has consumed it, and its next read, a
// later epoch, must come from storage. A file being read (IN_ACCESS) and not
// closed since, such as a large shard streamed through one descriptor, is
// swept every sweepMs with the page-by-page logic of page-sweep.ts until it
// turns idle. Which file goes when is eviction-policy.ts, shared with the
// fanotify keeper. The work follows the files the job touches, never the
// whole dataset.
//
// A close evicts the file even if another worker still reads it; that
// worker's next reads put the file in the sweeps. A file mapped with mmap
// stays resident whatever the keeper does: DONTNEED skips mapped pages.
//
// The event queue is drained on an unref'd timer (a tick with no events costs
// one read(2) answering EAGAIN), so evictions are batched and a busy job pays
// no wake-up per file. If the queue overflows anyway (fs.inotify.
// max_queued_events; the drain speeds up long before that), events are lost:
// the keeper counts it, forgets which files it believed were being read, and
// evicts the whole dataset once, in yielding chunks, draining between chunks
// (overflow-sweep.ts).
//
// The same keeper is a dataset cache cap (capBytes > 0; validate's cache
// points): closed files enter the policy's LRU instead of being evicted at
// once, and the cap reads the dataset's residency through its own descriptors
// (residency-estimate.ts). A cold keeper is the cap of 0.
import fs from 'node:fs';
import type { LibcBindings } from '../kernel/libc.js';
import { errnoError } from '../kernel/errno.js';
import { adviseDontNeed, residentBytesOfFd, type FileRef } from '../page-cache/page-cache.js';
import { sweepFilePages } from '../page-cache/page-sweep.js';
import type { FileTable } from '../dataset/file-table.js';
import { keeperAccounts, type KeeperAccounts } from './keeper-accounts.js';
import type { CpuLedger } from '../kernel/cpu-ledger.js';
import { overflowSweep, type OverflowSweep } from './overflow-sweep.js';
import { keeperTable } from './keeper-dataset.js';
import { EvictionPolicy } from './eviction-policy.js';
import { watchTable, type InotifyEvents, type InotifyHandlers } from './inotify-events.js';
import { estimateResidency, type ResidencyReading } from './residency-estimate.js';
import type { ColdKeeper, ColdKeeperStats } from './keeper-types.js';

export type { ResidencyReading } from './residency-estimate.js';

/** Options of the inotify keeper. */
export interface InotifyKeeperOptions {
  /** Time between drains of the event queue. */
  drainMs: number;
  /**
   * Time between sweeps of the files held open (made at the first drain this long after the last: no timer of their
   * own).
   */
  sweepMs: number;
  /** Charged with the keeper's CPU, as 'keeper'. */
  ledger?: CpuLedger;
  /** Dataset bytes the page cache may hold (an LRU of closed files); 0 or absent: keep the dataset cold. */
  capBytes?: number;
}

/** A running inotify keeper: a cold keeper, or a cache cap that can also read the dataset's residency. */
export interface InotifyKeeper extends ColdKeeper {
  /**
   * Reads the dataset's residency: all files the cap holds and, of the others,
   * up to `sampleFiles` chosen at random (each group read whole when it is
   * smaller than that), so a reading costs the same on a dataset of a million
   * files. Resolves null once the keeper is stopped.
   */
  readResidency(sampleFiles: number, random?: () => number): ResidencyReading | null;
}

/** The keeper, or why inotify cannot be used here (the caller falls back to scanning). */
export type InotifyKeeperStart = { ok: true; keeper: InotifyKeeper } | { ok: false; reason: string };

// A drain that found more than this share of the queue's capacity comes back
// sooner, before a fast job can overflow it.
const BUSY_QUEUE_SHARE = 0.25;
const BUSY_DRAIN_MS = 5;

/** Starts the inotify keeper over `files`, or answers why it cannot run; never throws. */
export function startInotifyKeeper(
  libc: LibcBindings,
  files: readonly FileRef[],
  options: InotifyKeeperOptions,
): InotifyKeeperStart {
  const setupStarted = performance.now();
  const table = keeperTable(files);
  const watching = watchTable(libc, table);
  if (!watching.ok) return { ok: false, reason: watching.reason };
  const keeper = new RunningInotifyKeeper(libc, table, watching.events, options);
  keeper.accounts.stats.setupSec = (performance.now() - setupStarted) / 1000;
  return { ok: true, keeper };
}

/** The keeper at work: every file is its index in the table. */
class RunningInotifyKeeper implements InotifyKeeper {
  readonly mechanism = 'inotify' as const;
  readonly accounts: KeeperAccounts;
  private readonly policy: EvictionPolicy<number>;
  private readonly afterOverflow: OverflowSweep;
  /** When the files held open were last swept (performance.now()). */
  private sweptAt = performance.now();
  private drainTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private stopping: Promise<ColdKeeperStats> | undefined;
  /** The dataset's size, summed at the first residency reading: it does not change. */
  private datasetBytes: number | undefined;
  /** Drains the queue into the handlers; returns how many events it read. */
  private readonly readEvents: () => number;

  constructor(
    private readonly libc: LibcBindings,
    private readonly table: FileTable,
    private readonly events: InotifyEvents,
    private readonly options: InotifyKeeperOptions,
  ) {
    this.readEvents = events.reader(this.handlers);
    this.policy = new EvictionPolicy<number>(Math.max(0, options.capBytes ?? 0));
    this.accounts = keeperAccounts('inotify', events.watches, libc, options.ledger);
    const { metered, fail } = this.accounts;
    // After lost events: every file evicted once, but what a cap's LRU holds.
    this.afterOverflow = overflowSweep({
      files: table.length,
      evict: (k) => this.evictAfterOverflow(k),
      keep: (k) => this.policy.keeps(k),
      drain: () => void this.drain(),
      metered,
      fail,
      stopped: () => this.stopped,
    });
    this.drainTimer = setTimeout(this.tick, options.drainMs);
    this.drainTimer.unref();
  }

  /** What the job did, as the events tell it. */
  private readonly handlers: InotifyHandlers = {
    overflow: () => {
      this.accounts.counters.queueOverflows++;
      // The sweep that follows evicts every file instead.
      this.policy.forgetReading();
      this.afterOverflow.request();
    },
    read: (k) => {
      if (this.policy.readingState(k) === undefined) this.policy.startReading(k, { idleSweeps: 0 });
    },
    closed: (k) => {
      this.accounts.counters.closeEvents++;
      this.policy.closed(k, this.sizeOf(k));
    },
    lostWatch: () => void this.accounts.counters.lostWatches++,
    failed: (error) => this.accounts.fail('(inotify read)', error),
  };

  private readonly tick = (): void => {
    if (this.stopped) return;
    let events = 0;
    this.accounts.metered(() => {
      events = this.drain();
      this.sweepWhenDue();
    });
    this.afterOverflow.start();
    const busy = events > this.events.queueCapacity * BUSY_QUEUE_SHARE;
    this.drainTimer = setTimeout(this.tick, busy ? BUSY_DRAIN_MS : this.options.drainMs);
    this.drainTimer.unref();
  };

  // The sweep of the files held open rides on the drain's timer (no wake-up of
  // its own): at the first tick at least sweepMs after the last sweep.
  private sweepWhenDue(): void {
    const now = performance.now();
    if (now - this.sweptAt < this.options.sweepMs) return;
    this.sweptAt = now;
    if (this.policy.readingCount > 0) this.sweep();
  }

  // Reads the queue and evicts what was closed. The keeper's own events are
  // read at once too: an unread close of its own would otherwise merge with
  // the job's next close of the same file, hiding it.
  private drain(): number {
    let events = this.readEvents();
    if (this.evictClosed() > 0) {
      events += this.readEvents();
      this.evictClosed();
    }
    return events;
  }

  /** Evicts what the policy says must go now; returns how many files. */
  private evictClosed(): number {
    const { stats, counters, fail } = this.accounts;
    let evicted = 0;
    for (const k of this.policy.evictions()) {
      try {
        stats.reEvictedBytes += this.evictWhole(k);
        stats.reEvictions++;
        counters.closeEvictions++;
        evicted++;
      } catch (error) {
        fail(this.table.path(k), error);
      }
    }
    return evicted;
  }

  /** A sweep of the files being read: page by page for a cold keeper, measured under a cap. */
  private readonly sweep = (): void => (this.policy.caps ? this.measureOpen() : this.sweepOpen());

  // The files being read and not closed, page by page: old pages go, just-read
  // ones stay one sweep (page-sweep.ts).
  private sweepOpen(): void {
    this.policy.sweepReading((k) => this.sweepPages(k));
    this.accounts.stats.sweeps++;
    // The sweep's own events, read now for the reason given at drain().
    this.readEvents();
  }

  private sweepPages(k: number): boolean {
    let active = false;
    try {
      this.events.withOwnDescriptor(k, (own) => {
        const swept = sweepFilePages(this.libc, own, this.table.path(k), this.policy.previousPages(k));
        active = this.accounts.sweptFile(swept);
        this.policy.setPreviousPages(k, swept.arrived);
      });
    } catch (error) {
      this.accounts.fail(this.table.path(k), error);
    }
    return active;
  }

  // Cap: the files being read are measured, not swept; they count against the
  // cap as the most recently used. Only when they alone hold more than the cap
  // are their old pages swept.
  private measureOpen(): void {
    const overCap = this.policy.measureReading((k) => this.residentOrNull(k));
    this.accounts.stats.sweeps++;
    if (overCap) {
      this.sweepOpen();
      this.policy.measuredOverCap();
    }
    this.readEvents();
    this.evictClosed();
    this.readEvents();
  }

  private evictAfterOverflow(k: number): void {
    try {
      this.evictWhole(k);
      this.accounts.counters.overflowSweptFiles++;
    } catch (error) {
      this.accounts.fail(this.table.path(k), error);
    }
  }

  /** Evicts file `k` whole; returns the bytes advised out: its size. */
  private evictWhole(k: number): number {
    let bytes = this.table.sizes[k];
    this.events.withOwnDescriptor(k, (own) => {
      if (bytes < 0) bytes = fs.fstatSync(own).size;
      adviseDontNeed(this.libc, own, 0, 0);
    });
    return bytes;
  }

  // A file's resident bytes through the keeper's own descriptor (an open, an
  // mmap and a mincore: tens of microseconds), or null when it cannot be read.
  private residentOrNull(k: number): number | null {
    let bytes: number | null = null;
    try {
      this.events.withOwnDescriptor(k, (own) => {
        const resident = residentBytesOfFd(this.libc, own, this.sizeOf(k));
        if (resident < 0) throw errnoError(-resident, 'mincore');
        bytes = resident;
      });
    } catch (error) {
      this.accounts.fail(this.table.path(k), error);
    }
    return bytes;
  }

  private sizeOf(k: number): number {
    const known = this.table.sizes[k];
    if (known >= 0) return known;
    try {
      return fs.statSync(this.table.path(k)).size;
    } catch {
      return 0;
    }
  }

  readResidency(sampleFiles: number, random: () => number = Math.random): ResidencyReading | null {
    if (this.stopped) return null;
    let reading: ResidencyReading | null = null;
    this.accounts.metered(() => {
      this.drain();
      this.datasetBytes ??= this.table.totalBytes();
      const estimate = estimateResidency({
        files: this.table.length,
        datasetBytes: this.datasetBytes,
        held: this.policy.heldFiles(),
        sampleFiles,
        sizeOf: (k) => this.sizeOf(k),
        residentOf: (k) => this.residentOrNull(k) ?? 0,
        random,
      });
      reading = {
        residentBytes: estimate.residentBytes,
        heldBytes: this.policy.heldBytes(),
        measuredFiles: estimate.measuredFiles,
        exact: estimate.exact,
      };
      // The readings' own closes, read now (see drain()).
      this.readEvents();
    });
    const { counters } = this.accounts;
    counters.residencyReadings = (counters.residencyReadings ?? 0) + 1;
    return reading;
  }

  scanNow(): Promise<void> {
    return this.afterOverflow.scanNow(() => {
      this.drain();
      this.sweep();
    });
  }

  stop(): Promise<ColdKeeperStats> {
    this.stopping ??= (async () => {
      this.stopped = true;
      clearTimeout(this.drainTimer);
      await this.afterOverflow.settled();
      // Closing the descriptor removes every watch (inotify(7)).
      this.events.close();
      const { stats, counters } = this.accounts;
      return { ...stats, events: { ...counters } };
    })();
    return this.stopping;
  }
}
