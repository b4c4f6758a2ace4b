// The cold keeper for root: fanotify hands over each file the job closes,
// already open.
//
// The inotify keeper (inotify-keeper.ts) costs 14 to 20 us per file the job
// closes: three events to read (the job's read and close, and the close of
// its own descriptor) and an open, an fadvise and a close of its own. A light
// job here closes 6,400 files a second, so that was 10% of a CPU taken from
// the job it measures. A fanotify(7) group of class FAN_CLASS_NOTIF gets, with
// every event, a descriptor the kernel opened on the file for it, and the
// kernel makes no events for those descriptors. So a file the job read and
// closed costs one event (the kernel merges a read and the close that follows
// while both are unread), one fadvise(DONTNEED) and one close: about 4 us.
// fanotify with descriptors needs CAP_SYS_ADMIN; without it the inotify keeper
// runs.
//
// Each directory holding dataset files is marked for its children's reads and
// closes, as the inotify keeper watches it. Events carry no name, so a file
// in those directories that is not in the dataset's list is evicted too when
// the job reads it: such a file lives among the dataset's files and is read
// by the job while it trains.
//
// A read event with no close (a file held open and streamed, such as a large
// shard) keeps its descriptor in the files being read, found again by device
// and inode; those are swept page by page every sweepMs as the inotify keeper
// does (page-sweep.ts), until their close or IDLE_SWEEPS idle sweeps.
//
// The queue is unlimited (FAN_UNLIMITED_QUEUE), so a slow drain costs kernel
// memory, not events. The kernel still queues an overflow when it cannot
// allocate an event (its memory is charged to this process's memory cgroup);
// then, as the inotify keeper does, every file is evicted once, in chunks.
import fs from 'node:fs';
import { AT_FDCWD, EAGAIN, FAN, O_RDONLY_CLOEXEC, type LibcBindings } from '../kernel/libc.js';
import { forEachFanotifyEvent } from '../kernel/fanotify.js';
import { adviseDontNeed, type FileRef } from '../page-cache/page-cache.js';
import { errnoError, errnoName } from '../kernel/errno.js';
import { sweepFilePages } from '../page-cache/page-sweep.js';
import { keeperAccounts } from './keeper-accounts.js';
import { overflowSweep } from './overflow-sweep.js';
import { keeperTable, watchedDirs } from './keeper-dataset.js';
import type { ColdKeeper, ColdKeeperStats } from './keeper-types.js';

/** Options of the fanotify keeper. */
export interface FanotifyKeeperOptions {
  /** Time between drains of the event queue. */
  drainMs: number;
  /** Time between sweeps of the files held open. */
  sweepMs: number;
}

/** The keeper, or why fanotify cannot be used here (the caller falls back to inotify). */
export type FanotifyKeeperStart = { ok: true; keeper: ColdKeeper } | { ok: false; reason: string };

const MARK_MASK = FAN.access | FAN.closeNowrite | FAN.eventOnChild;
const IDLE_SWEEPS = 3;
// The kernel opens a descriptor for every event a read returns, before the
// keeper closes any: 8 KiB (~340 events) keeps that far below a 1,024-file limit.
const EVENT_BUFFER_BYTES = 8 * 1024;
// At most 4 MiB of events (~170k) per drain, so one drain cannot hog the loop;
// a drain that stopped there comes back after BUSY_DRAIN_MS.
const MAX_READS_PER_DRAIN = 512;
const BUSY_DRAIN_MS = 5;

/** A file the job reads and has not closed: the keeper's own descriptor on it, and its sweep state. */
interface FileBeingRead {
  fd: number;
  /** Its path, for messages and the ownership check of mincore. */
  path: string;
  idleSweeps: number;
  /** Pages seen resident at the previous sweep (page-sweep.ts). */
  previous?: Uint8Array;
}

/** Starts the fanotify keeper over `files`, or answers why it cannot run; never throws. */
export function startFanotifyKeeper(libc: LibcBindings, files: readonly FileRef[], options: FanotifyKeeperOptions): FanotifyKeeperStart {
  const setupStarted = performance.now();
  const table = keeperTable(files);
  const dirs = watchedDirs(table).map((watched) => watched.path);
  const flags = FAN.classNotif | FAN.cloexec | FAN.nonblock | FAN.unlimitedQueue | FAN.unlimitedMarks;
  const fd = libc.fanotifyInit(flags, FAN.eventFileFlags);
  if (fd < 0) {
    const code = errnoName(-fd);
    return { ok: false, reason: code === 'EPERM' ? 'fanotify needs CAP_SYS_ADMIN (root)' : `fanotify_init failed (${code})` };
  }
  for (const dir of dirs) {
    const errno = libc.fanotifyMark(fd, FAN.markAdd | FAN.markOnlyDir, MARK_MASK, AT_FDCWD, dir);
    if (errno !== 0) {
      libc.close(fd);
      return { ok: false, reason: `cannot mark ${dir} (fanotify_mark: ${errnoName(errno)})` };
    }
  }

  const buffer = Buffer.alloc(EVENT_BUFFER_BYTES);
  const { stats, counters, fail, metered, sweptFile } = keeperAccounts('fanotify', dirs.length, libc);
  // Files read and not closed, by `${dev}:${ino}`.
  const reading = new Map<string, FileBeingRead>();
  let stopped = false;
  let drainTimer: NodeJS.Timeout | undefined;

  const fileKey = (eventFd: number): string => {
    const stat = fs.fstatSync(eventFd);
    return `${stat.dev}:${stat.ino}`;
  };
  const stopReading = (key: string): void => {
    const file = reading.get(key);
    if (!file) return;
    reading.delete(key);
    libc.close(file.fd);
  };

  const onEvent = (mask: number, eventFd: number): void => {
    if (mask & FAN.queueOverflow) {
      // Events were lost: closes, and reads of files held open. The sweep that follows evicts every file.
      counters.queueOverflows++;
      for (const key of [...reading.keys()]) stopReading(key);
      afterOverflow.request();
      return;
    }
    if (eventFd < 0) return;
    let keep = false;
    try {
      if (mask & FAN.onDir) return;
      if (mask & FAN.closeNowrite) {
        counters.closeEvents++;
        // Only a file held open needs its identity: most closes never pay an fstat.
        if (reading.size > 0) {
          try {
            stopReading(fileKey(eventFd));
          } catch (error) {
            fail(pathOf(eventFd), error);
          }
        }
        adviseDontNeed(libc, eventFd, 0, 0);
        counters.closeEvictions++;
        stats.reEvictions++;
        return;
      }
      if (mask & FAN.access) {
        const key = fileKey(eventFd);
        const file = reading.get(key);
        if (file) file.idleSweeps = 0;
        else {
          reading.set(key, { fd: eventFd, path: pathOf(eventFd), idleSweeps: 0 });
          keep = true;
        }
      }
    } catch (error) {
      fail(pathOf(eventFd), error);
    } finally {
      if (!keep) libc.close(eventFd);
    }
  };

  // Reads queued events, at most MAX_READS_PER_DRAIN buffers; true when it stopped with more to read.
  const drain = (): boolean => {
    for (let reads = 0; reads < MAX_READS_PER_DRAIN; reads++) {
      const bytes = libc.read(fd, buffer);
      if (bytes === -EAGAIN || bytes === 0) return false;
      if (bytes < 0) {
        fail('(fanotify read)', errnoError(-bytes, 'read'));
        return false;
      }
      forEachFanotifyEvent(buffer, bytes, onEvent, () => fail('(fanotify read)', new Error('an event this code cannot read (another metadata version)')));
    }
    return true;
  };

  // The files being read and not closed, page by page: old pages go, just-read
  // ones stay one sweep; files found idle IDLE_SWEEPS times in a row leave.
  const sweepOpen = (): void => {
    for (const [key, file] of reading) {
      let active = false;
      try {
        const swept = sweepFilePages(libc, file.fd, file.path, file.previous);
        active = sweptFile(swept);
        file.previous = swept.arrived;
      } catch (error) {
        fail(file.path, error);
      }
      if (active) file.idleSweeps = 0;
      else if (++file.idleSweeps >= IDLE_SWEEPS) stopReading(key);
    }
    stats.sweeps++;
  };

  // After lost events (overflow-sweep.ts). The keeper's own opens here make
  // events too; each costs one more eviction through its event's descriptor,
  // not a loop (those make none).
  const afterOverflow = overflowSweep({
    files: table.length,
    evict: (k) => {
      const path = table.path(k);
      const own = libc.open(path, O_RDONLY_CLOEXEC);
      if (own < 0) return fail(path, errnoError(-own, 'open'));
      try {
        adviseDontNeed(libc, own, 0, 0);
        counters.overflowSweptFiles++;
      } catch (error) {
        fail(path, error);
      } finally {
        libc.close(own);
      }
    },
    drain: () => void drain(),
    metered,
    fail,
    stopped: () => stopped,
  });

  const tick = (): void => {
    if (stopped) return;
    let busy = false;
    metered(() => (busy = drain()));
    afterOverflow.start();
    drainTimer = setTimeout(tick, busy ? BUSY_DRAIN_MS : options.drainMs);
    drainTimer.unref();
  };
  drainTimer = setTimeout(tick, options.drainMs);
  drainTimer.unref();
  const sweepTimer = setInterval(() => {
    if (!stopped && reading.size > 0) metered(sweepOpen);
  }, options.sweepMs);
  sweepTimer.unref();
  stats.setupSec = (performance.now() - setupStarted) / 1000;

  let stopping: Promise<ColdKeeperStats> | undefined;
  return {
    ok: true,
    keeper: {
      mechanism: 'fanotify',
      scanNow: () =>
        afterOverflow.scanNow(() => {
          while (drain());
          sweepOpen();
        }),
      stop: () => {
        stopping ??= (async () => {
          stopped = true;
          clearTimeout(drainTimer);
          clearInterval(sweepTimer);
          await afterOverflow.settled();
          for (const key of [...reading.keys()]) stopReading(key);
          // Closing the group's descriptor removes its marks and frees the queued events' references.
          libc.close(fd);
          return { ...stats, events: { ...counters } };
        })();
        return stopping;
      },
    },
  };
}

/** The path a descriptor was opened on (for messages), or its /proc name when that cannot be read. */
function pathOf(fd: number): string {
  const link = `/proc/self/fd/${fd}`;
  try {
    return fs.readlinkSync(link);
  } catch {
    return link;
  }
}
