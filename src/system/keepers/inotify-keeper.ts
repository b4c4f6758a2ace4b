// The cold keeper for any user: a file the job closed is dropped whole, a file read and not closed (a streamed shard)
// swept page by page until idle. With capBytes > 0 it is a cache cap: closed files enter the policy's LRU, and it reads
// the dataset's residency.
import fs from 'node:fs';
import type { LibcBindings } from '../kernel/libc.js';
import { errnoError } from '../kernel/errno.js';
import { adviseDontNeed, residentBytesOfFd, type FileRef } from '../page-cache/page-cache.js';
import { sweepFilePages } from '../page-cache/page-sweep.js';
import type { FileTable } from '../dataset/file-table.js';
import { keeperTable } from './keeper-dataset.js';
import { EventKeeper, type EventKeeperOptions, type KeeperStart } from './event-keeper.js';
import { watchTable, type InotifyEvents, type InotifyHandlers } from './inotify-events.js';
import { estimateResidency, type ResidencyReading } from './residency-estimate.js';
import type { ColdKeeper } from './keeper-types.js';

export type { ResidencyReading } from './residency-estimate.js';

/** A running inotify keeper: a cold keeper, or a cache cap that can also read the dataset's residency. */
export interface InotifyKeeper extends ColdKeeper {
  /** The dataset's residency: the files the cap holds and up to `sampleFiles` others; null once stopped. */
  readResidency(sampleFiles: number, random?: () => number): ResidencyReading | null;
}

// A drain that found more than this share of the queue's capacity comes back sooner, before it overflows.
const BUSY_QUEUE_SHARE = 0.25;

/** Starts the inotify keeper over `files`, or answers why it cannot run; never throws. */
export function startInotifyKeeper(
  libc: LibcBindings,
  files: readonly FileRef[],
  options: EventKeeperOptions,
): KeeperStart<InotifyKeeper> {
  const setupStarted = performance.now();
  const table = keeperTable(files);
  const watching = watchTable(libc, table);
  if (!watching.ok) return watching;
  const keeper = new RunningInotifyKeeper(libc, table, watching.events, options);
  keeper.stats.setupSec = (performance.now() - setupStarted) / 1000;
  return { ok: true, keeper };
}

/** The keeper at work: every file is its index in the table. */
class RunningInotifyKeeper extends EventKeeper<number> implements InotifyKeeper {
  /** The dataset's size, summed at the first residency reading: it does not change. */
  private datasetBytes: number | undefined;
  /** Drains the queue into the handlers; returns how many events it read. */
  private readonly readEvents: () => number;

  constructor(
    libc: LibcBindings,
    private readonly table: FileTable,
    private readonly events: InotifyEvents,
    options: EventKeeperOptions,
  ) {
    super('inotify', events.watches, table.length, libc, options);
    this.readEvents = events.reader(this.handlers);
  }

  /** What the job did, as the events tell it. */
  private readonly handlers: InotifyHandlers = {
    overflow: () => {
      // The sweep that follows evicts every file instead.
      this.policy.forgetReading();
      this.overflowed();
    },
    read: (k) => {
      if (this.policy.readingState(k) === undefined) this.policy.startReading(k, { idleSweeps: 0 });
    },
    closed: (k) => {
      this.counters.closeEvents++;
      this.policy.closed(k, this.sizeOf(k));
    },
    lostWatch: () => void this.counters.lostWatches++,
    failed: (error) => this.fail('(inotify read)', error),
  };

  // Reads the queue and evicts what was closed, then reads the keeper's own events: an unread close of its own would
  // merge with the job's next close of the same file, hiding it.
  protected drain(): boolean {
    let events = this.readEvents();
    if (this.evictClosed() > 0) {
      events += this.readEvents();
      this.evictClosed();
    }
    return events > this.events.queueCapacity * BUSY_QUEUE_SHARE;
  }

  protected override keeps(k: number): boolean {
    return this.policy.keeps(k);
  }

  /** Evicts what the policy says must go now; returns how many files. */
  private evictClosed(): number {
    let evicted = 0;
    for (const k of this.policy.evictions()) {
      try {
        this.stats.reEvictedBytes += this.evictWhole(k);
        this.stats.reEvictions++;
        this.counters.closeEvictions++;
        evicted++;
      } catch (error) {
        this.fail(this.table.path(k), error);
      }
    }
    return evicted;
  }

  /** A sweep of the files being read: page by page for a cold keeper, measured under a cap. */
  protected sweep(): void {
    if (this.policy.caps) this.measureOpen();
    else this.sweepOpen();
  }

  // The files being read and not closed, page by page: old pages go, just-read ones stay one sweep.
  private sweepOpen(): void {
    this.policy.sweepReading((k) => this.sweepPages(k));
    this.stats.sweeps++;
    // The sweep's own events, read now for the reason given at drain().
    this.readEvents();
  }

  private sweepPages(k: number): boolean {
    let active = false;
    try {
      this.events.withOwnDescriptor(k, (own) => {
        const swept = sweepFilePages(this.libc, own, this.table.path(k), this.policy.previousPages(k));
        active = this.sweptFile(swept);
        this.policy.setPreviousPages(k, swept.arrived);
      });
    } catch (error) {
      this.fail(this.table.path(k), error);
    }
    return active;
  }

  // Cap: the files being read count as the most recently used, measured; swept only when alone over the cap.
  private measureOpen(): void {
    const overCap = this.policy.measureReading((k) => this.residentOrNull(k));
    this.stats.sweeps++;
    if (overCap) {
      this.sweepOpen();
      this.policy.measuredOverCap();
    }
    this.readEvents();
    this.evictClosed();
    this.readEvents();
  }

  protected evictAfterOverflow(k: number): void {
    try {
      this.evictWhole(k);
      this.counters.overflowSweptFiles++;
    } catch (error) {
      this.fail(this.table.path(k), error);
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

  // A file's resident bytes through the keeper's own descriptor (tens of microseconds), or null when unreadable.
  private residentOrNull(k: number): number | null {
    let bytes: number | null = null;
    try {
      this.events.withOwnDescriptor(k, (own) => {
        const resident = residentBytesOfFd(this.libc, own, this.sizeOf(k));
        if (resident < 0) throw errnoError(-resident, 'mincore');
        bytes = resident;
      });
    } catch (error) {
      this.fail(this.table.path(k), error);
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
    this.metered(() => {
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
    this.counters.residencyReadings = (this.counters.residencyReadings ?? 0) + 1;
    return reading;
  }

  // Closing the descriptor removes every watch (inotify(7)).
  protected closeEvents(): void {
    this.events.close();
  }
}
