// The cold keeper for root: fanotify hands over each file the job closes, already open. The inotify keeper costs 14 to
// 20 us a closed file (three events, and an open, an fadvise and a close of its own: 10% of a CPU at 6,400 files a
// second); here the event brings a descriptor the kernel opened and makes no events for, so a read and closed file
// costs one event, one fadvise and one close: about 4 us. A read with no close (a streamed shard) keeps its descriptor,
// found again by device and inode, for the sweeps.
import { O_RDONLY_CLOEXEC, type LibcBindings } from '../kernel/libc.js';
import { errnoError } from '../kernel/errno.js';
import { adviseDontNeed, type FileRef } from '../page-cache/page-cache.js';
import { sweepFilePages } from '../page-cache/page-sweep.js';
import type { FileTable } from '../dataset/file-table.js';
import { keeperTable } from './keeper-dataset.js';
import type { FileBeingRead } from './eviction-policy.js';
import { EventKeeper, type EventKeeperOptions, type KeeperStart } from './event-keeper.js';
import { fileKey, markTable, pathOf, type FanotifyEvents, type FanotifyHandlers } from './fanotify-events.js';
import type { ColdKeeper } from './keeper-types.js';

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
  options: EventKeeperOptions,
): KeeperStart<ColdKeeper> {
  const setupStarted = performance.now();
  const table = keeperTable(files);
  const marking = markTable(libc, table);
  if (!marking.ok) return marking;
  const keeper = new FanotifyKeeper(libc, table, marking.events, options);
  keeper.stats.setupSec = (performance.now() - setupStarted) / 1000;
  return { ok: true, keeper };
}

/** The keeper at work: a file being read is known by `${dev}:${ino}`. */
class FanotifyKeeper extends EventKeeper<string, HeldFile> {
  /** Drains the group into the handlers; true when more is queued. */
  private readonly readEvents: () => boolean;

  constructor(
    libc: LibcBindings,
    private readonly table: FileTable,
    private readonly events: FanotifyEvents,
    options: EventKeeperOptions,
  ) {
    super('fanotify', events.marks, table.length, libc, { ...options, capBytes: 0 });
    this.readEvents = events.reader(this.handlers);
  }

  /** What the job did, as the events tell it. */
  private readonly handlers: FanotifyHandlers = {
    overflow: () => {
      this.releaseAll();
      this.overflowed();
    },
    closed: (eventFd) => {
      this.counters.closeEvents++;
      // Only a file held open needs its identity: most closes never pay an fstat.
      if (this.policy.readingCount > 0) {
        try {
          this.release(this.policy.stopReading(fileKey(eventFd)));
        } catch (error) {
          this.fail(pathOf(eventFd), error);
        }
      }
      adviseDontNeed(this.libc, eventFd, 0, 0);
      this.counters.closeEvictions++;
      this.stats.reEvictions++;
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
    failed: (what, error) => this.fail(what, error),
  };

  protected drain(): boolean {
    return this.readEvents();
  }

  // The files being read and not closed, page by page; idle ones leave, and their descriptors are closed.
  protected sweep(): void {
    this.policy.sweepReading(
      (key, file) => this.sweepPages(key, file),
      (_key, file) => this.release(file),
    );
    this.stats.sweeps++;
  }

  private sweepPages(key: string, file: HeldFile): boolean {
    try {
      const swept = sweepFilePages(this.libc, file.fd, file.path, this.policy.previousPages(key));
      this.policy.setPreviousPages(key, swept.arrived);
      return this.sweptFile(swept);
    } catch (error) {
      this.fail(file.path, error);
      return false;
    }
  }

  // The keeper's own opens make events too: each costs one more eviction, not a loop (those make none).
  protected evictAfterOverflow(k: number): void {
    const path = this.table.path(k);
    const own = this.libc.open(path, O_RDONLY_CLOEXEC);
    if (own < 0) {
      this.fail(path, errnoError(-own, 'open'));
      return;
    }
    try {
      adviseDontNeed(this.libc, own, 0, 0);
      this.counters.overflowSweptFiles++;
    } catch (error) {
      this.fail(path, error);
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

  // Closing the group's descriptor removes its marks and frees the queued events' references.
  protected closeEvents(): void {
    this.releaseAll();
    this.events.close();
  }
}
