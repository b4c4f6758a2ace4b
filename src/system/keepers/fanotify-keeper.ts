// The cold keeper for root: fanotify hands over each file the job closes,
// already open.
//
// The inotify keeper (inotify-keeper.ts) costs 14 to 20 us per file the job
// closes: three events to read (the job's read and close, and the close of
// its own descriptor) and an open, an fadvise and a close of its own. A light
// job here closes 6,400 files a second, so that was 10% of a CPU taken from
// the job it measures. A fanotify(7) group of class FAN_CLASS_NOTIF gets, with
// every event, a descriptor the kernel opened on the file for it, and the
// kernel makes no events for those descriptors (fanotify-events.ts). So a file
// the job read and closed costs one event (the kernel merges a read and the
// close that follows while both are unread), one fadvise(DONTNEED) and one
// close: about 4 us. fanotify with descriptors needs CAP_SYS_ADMIN; without
// it the inotify keeper runs.
//
// A closed file is evicted at once, here, through its event's descriptor (the
// inotify keeper's close rule at a cap of 0; the shared policy,
// eviction-policy.ts, keeps only the files being read and their sweeps, since
// its evictions go by path and this one needs the descriptor). A read event
// with no close (a file held open and streamed, such as a large shard) keeps
// its descriptor among the files being read, found again by device and inode;
// those are swept page by page every sweepMs (page-sweep.ts), until their
// close or IDLE_SWEEPS idle sweeps. After an overflow, as the inotify keeper
// does, every file is evicted once, in chunks (overflow-sweep.ts).
import { O_RDONLY_CLOEXEC, type LibcBindings } from '../kernel/libc.js';
import { errnoError } from '../kernel/errno.js';
import { adviseDontNeed, type FileRef } from '../page-cache/page-cache.js';
import { sweepFilePages } from '../page-cache/page-sweep.js';
import type { FileTable } from '../dataset/file-table.js';
import { keeperAccounts, type KeeperAccounts } from './keeper-accounts.js';
import type { CpuLedger } from '../kernel/cpu-ledger.js';
import { overflowSweep, type OverflowSweep } from './overflow-sweep.js';
import { keeperTable } from './keeper-dataset.js';
import { EvictionPolicy, type FileBeingRead } from './eviction-policy.js';
import { fileKey, markTable, pathOf, type FanotifyEvents, type FanotifyHandlers } from './fanotify-events.js';
import type { ColdKeeper, ColdKeeperStats } from './keeper-types.js';

/** Options of the fanotify keeper. */
export interface FanotifyKeeperOptions {
  /** Time between drains of the event queue. */
  drainMs: number;
  /**
   * Time between sweeps of the files held open (made at the first drain this long after the last: no timer of their
   * own).
   */
  sweepMs: number;
  /** Charged with the keeper's CPU, as 'keeper'. */
  ledger?: CpuLedger;
}

/** The keeper, or why fanotify cannot be used here (the caller falls back to inotify). */
export type FanotifyKeeperStart = { ok: true; keeper: ColdKeeper } | { ok: false; reason: string };

// A drain that stopped at its limit comes back after BUSY_DRAIN_MS.
const BUSY_DRAIN_MS = 5;

/** A file the job reads and has not closed: the keeper's own descriptor on it. */
interface HeldFile extends FileBeingRead {
  fd: number;
  /** Its path, for messages and the ownership check of mincore. */
  path: string;
}

/** Starts the fanotify keeper over `files`, or answers why it cannot run; never throws. */
export function startFanotifyKeeper(
  libc: LibcBindings,
  files: readonly FileRef[],
  options: FanotifyKeeperOptions,
): FanotifyKeeperStart {
  const setupStarted = performance.now();
  const table = keeperTable(files);
  const marking = markTable(libc, table);
  if (!marking.ok) return { ok: false, reason: marking.reason };
  const keeper = new RunningFanotifyKeeper(libc, table, marking.events, options);
  keeper.accounts.stats.setupSec = (performance.now() - setupStarted) / 1000;
  return { ok: true, keeper };
}

/** The keeper at work: a file being read is known by `${dev}:${ino}`. */
class RunningFanotifyKeeper implements ColdKeeper {
  readonly mechanism = 'fanotify' as const;
  readonly accounts: KeeperAccounts;
  private readonly policy = new EvictionPolicy<string, HeldFile>(0);
  private readonly afterOverflow: OverflowSweep;
  /** When the files held open were last swept (performance.now()). */
  private sweptAt = performance.now();
  private drainTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private stopping: Promise<ColdKeeperStats> | undefined;
  /** Drains the group into the handlers; true when more is queued. */
  private readonly readEvents: () => boolean;

  constructor(
    private readonly libc: LibcBindings,
    private readonly table: FileTable,
    private readonly events: FanotifyEvents,
    private readonly options: FanotifyKeeperOptions,
  ) {
    this.readEvents = events.reader(this.handlers);
    this.accounts = keeperAccounts('fanotify', events.marks, libc, options.ledger);
    const { metered, fail } = this.accounts;
    // The keeper's own opens here make events too; each costs one more
    // eviction through its event's descriptor, not a loop (those make none).
    this.afterOverflow = overflowSweep({
      files: table.length,
      evict: (k) => this.evictAfterOverflow(k),
      drain: () => void this.readEvents(),
      metered,
      fail,
      stopped: () => this.stopped,
    });
    this.drainTimer = setTimeout(this.tick, options.drainMs);
    this.drainTimer.unref();
  }

  /** What the job did, as the events tell it. */
  private readonly handlers: FanotifyHandlers = {
    overflow: () => {
      // The sweep that follows evicts every file.
      this.accounts.counters.queueOverflows++;
      this.releaseAll();
      this.afterOverflow.request();
    },
    closed: (eventFd) => {
      const { stats, counters, fail } = this.accounts;
      counters.closeEvents++;
      // Only a file held open needs its identity: most closes never pay an fstat.
      if (this.policy.readingCount > 0) {
        try {
          this.release(this.policy.stopReading(fileKey(eventFd)));
        } catch (error) {
          fail(pathOf(eventFd), error);
        }
      }
      adviseDontNeed(this.libc, eventFd, 0, 0);
      counters.closeEvictions++;
      stats.reEvictions++;
    },
    read: (eventFd) => {
      const key = fileKey(eventFd);
      const file = this.policy.readingState(key);
      if (file) {
        file.idleSweeps = 0;
        return false;
      }
      this.policy.startReading(key, { fd: eventFd, path: pathOf(eventFd), idleSweeps: 0 });
      return true;
    },
    failed: (what, error) => this.accounts.fail(what, error),
  };

  private readonly tick = (): void => {
    if (this.stopped) return;
    let busy = false;
    this.accounts.metered(() => {
      busy = this.readEvents();
      this.sweepWhenDue();
    });
    this.afterOverflow.start();
    this.drainTimer = setTimeout(this.tick, busy ? BUSY_DRAIN_MS : this.options.drainMs);
    this.drainTimer.unref();
  };

  // The sweep of the files held open rides on the drain's timer (no wake-up of
  // its own): at the first tick at least sweepMs after the last sweep.
  private sweepWhenDue(): void {
    const now = performance.now();
    if (now - this.sweptAt < this.options.sweepMs) return;
    this.sweptAt = now;
    if (this.policy.readingCount > 0) this.sweepOpen();
  }

  // The files being read and not closed, page by page: old pages go, just-read
  // ones stay one sweep; idle ones leave, and their descriptors are closed.
  private readonly sweepOpen = (): void => {
    this.policy.sweepReading(
      (key, file) => this.sweepPages(key, file),
      (_key, file) => this.release(file),
    );
    this.accounts.stats.sweeps++;
  };

  private sweepPages(key: string, file: HeldFile): boolean {
    try {
      const swept = sweepFilePages(this.libc, file.fd, file.path, this.policy.previousPages(key));
      const active = this.accounts.sweptFile(swept);
      this.policy.setPreviousPages(key, swept.arrived);
      return active;
    } catch (error) {
      this.accounts.fail(file.path, error);
      return false;
    }
  }

  private evictAfterOverflow(k: number): void {
    const path = this.table.path(k);
    const own = this.libc.open(path, O_RDONLY_CLOEXEC);
    if (own < 0) {
      this.accounts.fail(path, errnoError(-own, 'open'));
      return;
    }
    try {
      adviseDontNeed(this.libc, own, 0, 0);
      this.accounts.counters.overflowSweptFiles++;
    } catch (error) {
      this.accounts.fail(path, error);
    } finally {
      this.libc.close(own);
    }
  }

  /** Closes the keeper's descriptor on a file no longer read. */
  private release(file: HeldFile | undefined): void {
    if (file) this.libc.close(file.fd);
  }

  private releaseAll(): void {
    for (const file of this.policy.forgetReading()) this.release(file);
  }

  scanNow(): Promise<void> {
    return this.afterOverflow.scanNow(() => {
      while (this.readEvents());
      this.sweepOpen();
    });
  }

  stop(): Promise<ColdKeeperStats> {
    this.stopping ??= (async () => {
      this.stopped = true;
      clearTimeout(this.drainTimer);
      await this.afterOverflow.settled();
      this.releaseAll();
      // Closing the group's descriptor removes its marks and frees the queued events' references.
      this.events.close();
      const { stats, counters } = this.accounts;
      return { ...stats, events: { ...counters } };
    })();
    return this.stopping;
  }
}
