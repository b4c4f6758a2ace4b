// The event-driven cold keeper: evict what the job has just finished reading.
//
// Each directory holding dataset files gets an inotify watch (inotify(7): no
// root needed, one watch per directory, so ImageNet's 1,000 class folders cost
// 1,000 watches). When a dataset file is closed (IN_CLOSE_NOWRITE), the keeper
// drops the whole file with posix_fadvise(DONTNEED): the job has consumed it,
// and its next read, a later epoch, must come from storage. A file being read
// (IN_ACCESS) and not closed since, such as a large shard streamed through
// one descriptor, is swept every sweepMs with the page-by-page logic of
// page-sweep.ts, and leaves the sweeps once three in a row find nothing of it
// resident (a later read brings it back). The work follows the files the job
// touches, never the whole dataset.
//
// Opens are not watched: they would double the events to read, and counting
// opens against closes cannot be trusted anyway, since the kernel merges an
// event into the previous one when both are identical and unread (inotify(7)).
// So a close evicts the file even if another worker still reads it; that
// worker's next reads put the file in the sweeps. A file mapped with mmap
// stays resident whatever the keeper does: DONTNEED skips mapped pages.
//
// The keeper's own opens make events too: an eviction opens the file and its
// close would ask for another eviction, forever. The keeper counts its own
// closes per file and takes that many later closes of the file as its own,
// and it reads its own events at once, so that an unread close of its own
// cannot merge with the job's next close of the same file and hide it.
//
// The event queue is drained on an unref'd timer (a tick with no events costs
// one read(2) answering EAGAIN), so evictions are batched and a busy job pays
// no wake-up per file. If the queue overflows anyway (fs.inotify.
// max_queued_events; the drain speeds up long before that), events are lost:
// the keeper counts it, forgets which files it believed were being read, and
// evicts the whole dataset once, in yielding chunks, draining between chunks.
//
// The same keeper is a dataset cache cap (capBytes > 0; validate's cache
// points): closed files enter an LRU (cache-lru.ts) instead of being evicted
// at once, and while the LRU and the files being read hold more than the cap,
// the least recently closed files are evicted. A cold keeper is the cap of 0.
// Files held open are measured at each sweep (mincore) and count against the
// cap as the most recently used; only when they alone exceed it are their old
// pages swept as the cold keeper does. A held-open file idle for IDLE_SWEEPS
// sweeps enters the LRU as if closed, at its resident bytes.
import fs from 'node:fs';
import { EAGAIN, IN, O_RDONLY_CLOEXEC, type LibcBindings } from '../kernel/libc.js';
import { forEachInotifyEvent } from '../kernel/inotify.js';
import { adviseDontNeed, residentBytesOfFd, type FileRef } from '../page-cache/page-cache.js';
import { errnoError, errnoName } from '../kernel/errno.js';
import { sweepFilePages } from '../page-cache/page-sweep.js';
import { keeperAccounts } from './keeper-accounts.js';
import { overflowSweep } from './overflow-sweep.js';
import { CacheLru } from './cache-lru.js';
import { keeperTable, watchedDirs } from './keeper-dataset.js';
import type { FileTable } from '../dataset/file-table.js';
import { readTextOrNull } from '../kernel/read-text.js';
import type { ColdKeeper, ColdKeeperStats } from './keeper-types.js';

// Messages shown to users (in the profile's state proof), in one table.
const MESSAGES = {
  tooManyDirs: (dirs: number, limit: number) =>
    `the dataset spans ${dirs} directories but fs.inotify.max_user_watches is ${limit}; ` +
    `raise it (sysctl fs.inotify.max_user_watches=${Math.max(dirs * 2, 65536)}) to keep the dataset cold at a fraction of the CPU`,
  initFailed: (code: string) => `inotify_init1 failed (${code})`,
  watchFailed: (dir: string, code: string) =>
    code === 'ENOSPC'
      ? `cannot watch ${dir}: the user's inotify watches are used up (fs.inotify.max_user_watches); raise it with sysctl`
      : `cannot watch ${dir} (inotify_add_watch: ${code})`,
} as const;

/** Options of the inotify keeper. */
export interface InotifyKeeperOptions {
  /** Time between drains of the event queue. */
  drainMs: number;
  /** Time between sweeps of the files held open. */
  sweepMs: number;
  /** Dataset bytes the page cache may hold (an LRU of closed files); 0 or absent: keep the dataset cold. */
  capBytes?: number;
}

/** A mincore reading of the dataset's residency, taken through the keeper (its own opens make no evictions). */
export interface ResidencyReading {
  /** Dataset bytes resident: exact where every file was read, else estimated from the samples. */
  residentBytes: number;
  /** Bytes the cap believes it holds: the LRU plus the resident bytes of the files being read. */
  heldBytes: number;
  /** Files read with mincore for this reading. */
  measuredFiles: number;
  /** True when every file was read (no sampling). */
  exact: boolean;
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

const WATCH_MASK = IN.access | IN.closeNowrite | IN.closeWrite | IN.onlyDir;
// Sweeps that find a swept file with nothing resident before it leaves the sweeps.
const IDLE_SWEEPS = 3;
const EVENT_BUFFER_BYTES = 64 * 1024;
// At most 4 MiB of events (~100k) per drain, so one drain cannot hog the loop.
const MAX_READS_PER_DRAIN = 64;
// A drain that found more than this share of the queue's capacity comes back
// sooner, before a fast job can overflow it.
const BUSY_QUEUE_SHARE = 0.25;
const BUSY_DRAIN_MS = 5;
const DEFAULT_QUEUED_EVENTS = 16384;

/** Bytes of the files whose size is known. */
function knownBytes(table: FileTable): number {
  let bytes = 0;
  for (let k = 0; k < table.length; k++) bytes += Math.max(0, table.sizes[k]);
  return bytes;
}

/** Every file of the table not in `held` (for a cap whose other files are few enough to read them all). */
function allFilesExcept(table: FileTable, held: ReadonlySet<number>): number[] {
  const out: number[] = [];
  for (let k = 0; k < table.length; k++) if (!held.has(k)) out.push(k);
  return out;
}

/** Why `dirs` directories cannot be watched under a limit of `limit` watches, or null when they can. */
export function watchLimitReason(dirs: number, limit: number | null): string | null {
  return limit !== null && dirs > limit ? MESSAGES.tooManyDirs(dirs, limit) : null;
}

/** Starts the inotify keeper over `files`, or answers why it cannot run; never throws. */
export function startInotifyKeeper(
  libc: LibcBindings,
  files: readonly FileRef[],
  options: InotifyKeeperOptions,
): InotifyKeeperStart {
  const setupStarted = performance.now();
  const capBytes = Math.max(0, options.capBytes ?? 0);
  const table = keeperTable(files);
  const dirs = watchedDirs(table);
  const limitReason = watchLimitReason(dirs.length, readProcNumber('/proc/sys/fs/inotify/max_user_watches'));
  if (limitReason) return { ok: false, reason: limitReason };

  const fd = libc.inotifyInit1(IN.nonblock | IN.cloexec);
  if (fd < 0) return { ok: false, reason: MESSAGES.initFailed(errnoName(-fd)) };
  // The table's directories behind each watch: two prefixes naming one directory share its watch.
  const dirsByWd = new Map<number, number[]>();
  for (const { dir, path } of dirs) {
    const wd = libc.inotifyAddWatch(fd, path, WATCH_MASK);
    if (wd < 0) {
      libc.close(fd);
      return { ok: false, reason: MESSAGES.watchFailed(path, errnoName(-wd)) };
    }
    dirsByWd.set(wd, [...(dirsByWd.get(wd) ?? []), dir]);
  }

  const queueCapacity = readProcNumber('/proc/sys/fs/inotify/max_queued_events') ?? DEFAULT_QUEUED_EVENTS;
  const buffer = Buffer.alloc(EVENT_BUFFER_BYTES);
  const { stats, counters, fail, metered, sweptFile } = keeperAccounts('inotify', dirsByWd.size, libc);
  // Every file is its index in the table.
  // Closes still to come from the keeper's own opens, per file.
  const ownCloses = new Map<number, number>();
  // Files read and not closed since, with the sweeps in a row that found them idle.
  const reading = new Map<number, number>();
  // Pages of swept files seen resident at the previous sweep (page-sweep.ts).
  const previous = new Map<number, Uint8Array>();
  // Files closed and still cached, least recently closed first; evicted at the
  // end of each drain down to the cap (all of them for a cold keeper).
  const lru = new CacheLru<number>();
  // Cap: resident bytes of the files being read, at the last sweep.
  const openResident = new Map<number, number>();
  const openBytes = (): number => {
    let total = 0;
    for (const bytes of openResident.values()) total += bytes;
    return total;
  };
  const sizeOf = (k: number): number => {
    const known = table.sizes[k];
    if (known >= 0) return known;
    try {
      return fs.statSync(table.path(k)).size;
    } catch {
      return 0;
    }
  };
  let stopped = false;
  let drainTimer: NodeJS.Timeout | undefined;


  // Opens file `k` for the keeper's own use; its close event is then expected and ignored.
  const withOwnDescriptor = (k: number, work: (fd: number) => void): void => {
    const own = libc.open(table.path(k), O_RDONLY_CLOEXEC);
    if (own < 0) throw errnoError(-own, 'open');
    try {
      work(own);
    } finally {
      libc.close(own);
      ownCloses.set(k, (ownCloses.get(k) ?? 0) + 1);
    }
  };

  // Returns the bytes advised out: the file's size.
  const evictWhole = (k: number): number => {
    let bytes = table.sizes[k];
    withOwnDescriptor(k, (own) => {
      if (bytes < 0) bytes = fs.fstatSync(own).size;
      adviseDontNeed(libc, own, 0, 0);
    });
    return bytes;
  };

  // The file an event names: its watch's directories searched by the name's bytes; -1 when not a dataset file.
  const fileOf = (wd: number, name: Buffer): number => {
    const inDirs = dirsByWd.get(wd);
    if (inDirs === undefined) return -1;
    for (const dir of inDirs) {
      const k = table.indexOfName(dir, name);
      if (k >= 0) return k;
    }
    return -1;
  };

  const onEvent = (wd: number, mask: number, name: Buffer): void => {
    if (mask & IN.queueOverflow) {
      counters.queueOverflows++;
      // Lost events may include reads, closes and the keeper's own closes:
      // what the keeper believed about them is void. The sweep that follows
      // evicts every file instead.
      ownCloses.clear();
      reading.clear();
      previous.clear();
      afterOverflow.request();
      return;
    }
    if (mask & IN.ignored) {
      if (dirsByWd.delete(wd)) counters.lostWatches++;
      return;
    }
    if (mask & IN.isDir || name.length === 0) return;
    // One search of the table by the name's bytes (no string made), then maps keyed by the file's index.
    const k = fileOf(wd, name);
    if (k < 0) return;
    const own = mask & IN.access ? undefined : ownCloses.get(k);
    if (own !== undefined) {
      if (own > 1) ownCloses.set(k, own - 1);
      else ownCloses.delete(k);
      return;
    }
    if (mask & IN.access) {
      if (reading.has(k)) return;
      // Read again: it is in use, not in the LRU, until its next close.
      reading.set(k, 0);
      lru.remove(k);
      return;
    }
    counters.closeEvents++;
    reading.delete(k);
    openResident.delete(k);
    lru.closed(k, sizeOf(k));
  };

  // Reads every queued event; returns how many.
  const readEvents = (): number => {
    let events = 0;
    for (let reads = 0; reads < MAX_READS_PER_DRAIN; reads++) {
      const bytes = libc.read(fd, buffer);
      if (bytes === -EAGAIN || bytes === 0) break;
      if (bytes < 0) {
        fail('(inotify read)', errnoError(-bytes, 'read'));
        break;
      }
      events += forEachInotifyEvent(buffer, bytes, onEvent);
    }
    return events;
  };

  // Evicts the least recently closed files while the cache holds more than
  // the cap (every closed file for a cold keeper); returns how many. A file
  // read again later in the same batch has left the LRU (onEvent): evicting it
  // would drop pages under the new reader, and its own close will come.
  const evictClosed = (): number => {
    let evicted = 0;
    for (const k of lru.overBudget(capBytes - openBytes())) {
      previous.delete(k);
      try {
        stats.reEvictedBytes += evictWhole(k);
        stats.reEvictions++;
        counters.closeEvictions++;
        evicted++;
      } catch (error) {
        fail(table.path(k), error);
      }
    }
    return evicted;
  };

  // Reads the queue and evicts what was closed. The keeper's own events are
  // read at once too: an unread close of its own would otherwise merge with
  // the job's next close of the same file, hiding it.
  const drain = (): number => {
    let events = readEvents();
    if (evictClosed() > 0) {
      events += readEvents();
      evictClosed();
    }
    return events;
  };

  // The files being read and not closed, page by page: old pages go, just-read
  // ones stay one sweep; files found idle IDLE_SWEEPS times in a row leave.
  const sweepOpen = (): void => {
    for (const k of previous.keys()) if (!reading.has(k)) previous.delete(k);
    for (const [k, idle] of reading) {
      let active = false;
      try {
        withOwnDescriptor(k, (own) => {
          const swept = sweepFilePages(libc, own, table.path(k), previous.get(k));
          active = sweptFile(swept);
          if (swept.arrived) previous.set(k, swept.arrived);
          else previous.delete(k);
        });
      } catch (error) {
        fail(table.path(k), error);
      }
      if (active) reading.set(k, 0);
      else if (idle + 1 < IDLE_SWEEPS) reading.set(k, idle + 1);
      else {
        // Closed while its close merged into another, or open and idle: a
        // later read brings it back (IN_ACCESS).
        reading.delete(k);
        previous.delete(k);
      }
    }
    stats.sweeps++;
    // The sweep's own events, read now for the reason given at drain().
    readEvents();
  };

  // A file's resident bytes through the keeper's own descriptor (an open, an
  // mmap and a mincore: tens of microseconds), or null when it cannot be read.
  const residentOrNull = (k: number): number | null => {
    let bytes: number | null = null;
    try {
      withOwnDescriptor(k, (own) => {
        const resident = residentBytesOfFd(libc, own, sizeOf(k));
        if (resident < 0) throw errnoError(-resident, 'mincore');
        bytes = resident;
      });
    } catch (error) {
      fail(table.path(k), error);
    }
    return bytes;
  };
  // Cap: the files being read are measured, not swept; they count against the
  // cap as the most recently used. Idle ones enter the LRU as if closed. Only
  // when they alone hold more than the cap are their old pages swept.
  const measureOpen = (): void => {
    for (const [k, idle] of reading) {
      const bytes = residentOrNull(k) ?? openResident.get(k) ?? 0;
      const active = bytes !== openResident.get(k);
      openResident.set(k, bytes);
      if (active) reading.set(k, 0);
      else if (idle + 1 < IDLE_SWEEPS) reading.set(k, idle + 1);
      else {
        reading.delete(k);
        openResident.delete(k);
        lru.closed(k, bytes);
      }
    }
    stats.sweeps++;
    if (openBytes() > capBytes) {
      sweepOpen();
      openResident.clear();
    }
    readEvents();
    evictClosed();
    readEvents();
  };

  // After lost events: every file evicted once (overflow-sweep.ts), but what a cap's LRU holds.
  const afterOverflow = overflowSweep({
    files: table.length,
    evict: (k) => {
      try {
        evictWhole(k);
        counters.overflowSweptFiles++;
      } catch (error) {
        fail(table.path(k), error);
      }
    },
    keep: (k) => lru.has(k),
    drain: () => void drain(),
    metered,
    fail,
    stopped: () => stopped,
  });

  const tick = (): void => {
    if (stopped) return;
    let events = 0;
    metered(() => (events = drain()));
    afterOverflow.start();
    drainTimer = setTimeout(tick, events > queueCapacity * BUSY_QUEUE_SHARE ? BUSY_DRAIN_MS : options.drainMs);
    drainTimer.unref();
  };
  drainTimer = setTimeout(tick, options.drainMs);
  drainTimer.unref();
  const sweep = capBytes > 0 ? measureOpen : sweepOpen;
  const sweepTimer = setInterval(() => {
    if (!stopped && reading.size > 0) metered(sweep);
  }, options.sweepMs);
  sweepTimer.unref();
  stats.setupSec = (performance.now() - setupStarted) / 1000;

  // Residency through the keeper's own descriptors: one reading of a file
  // costs an open, an mmap and a mincore (tens of microseconds).
  const residentOf = (k: number): number => residentOrNull(k) ?? 0;
  // Resident bytes of `group` (total size `groupBytes`): every file when it has
  // at most `sample`, else a random sample scaled by bytes.
  const estimate = (pick: (j: number) => number, count: number, groupBytes: number, sample: number, random: () => number) => {
    if (count <= sample) {
      let resident = 0;
      for (let j = 0; j < count; j++) resident += residentOf(pick(j));
      return { resident, measured: count, exact: true };
    }
    let resident = 0;
    let bytes = 0;
    for (let j = 0; j < sample; j++) {
      const k = pick(Math.floor(random() * count));
      resident += residentOf(k);
      bytes += sizeOf(k);
    }
    return { resident: bytes > 0 ? (resident / bytes) * groupBytes : 0, measured: sample, exact: false };
  };
  // The dataset's size, summed at the first reading: it does not change.
  let datasetBytes: number | undefined;
  const readResidency = (sampleFiles: number, random: () => number = Math.random): ResidencyReading | null => {
    if (stopped) return null;
    let reading_: ResidencyReading | null = null;
    metered(() => {
      drain();
      const held = [...new Set([...lru.paths(), ...reading.keys()])];
      const heldSet = new Set(held);
      let heldSizeBytes = 0;
      for (const k of held) heldSizeBytes += sizeOf(k);
      datasetBytes ??= knownBytes(table);
      const others = table.length - held.length;
      const inHeld = estimate((j) => held[j], held.length, heldSizeBytes, sampleFiles, random);
      // Others by rejection: held files are drawn again (a cap holds at most most of the dataset).
      const pickOther = (j: number): number => {
        if (others === table.length) return j;
        for (let tries = 0; tries < 64; tries++) {
          const k = Math.floor(random() * table.length);
          if (!heldSet.has(k)) return k;
        }
        for (let k = 0; k < table.length; k++) if (!heldSet.has(k)) return k;
        return 0;
      };
      const exactOthers = others <= sampleFiles;
      const otherFiles = exactOthers ? allFilesExcept(table, heldSet) : null;
      const inOthers =
        others === 0
          ? { resident: 0, measured: 0, exact: true }
          : estimate((j) => (otherFiles ? otherFiles[j] : pickOther(j)), others, Math.max(0, datasetBytes - heldSizeBytes), sampleFiles, random);
      reading_ = {
        residentBytes: inHeld.resident + inOthers.resident,
        heldBytes: lru.heldBytes + openBytes(),
        measuredFiles: inHeld.measured + inOthers.measured,
        exact: inHeld.exact && inOthers.exact,
      };
      // The readings' own closes, read now (see drain()).
      readEvents();
    });
    counters.residencyReadings = (counters.residencyReadings ?? 0) + 1;
    return reading_;
  };

  let stopping: Promise<ColdKeeperStats> | undefined;
  const keeper: InotifyKeeper = {
    mechanism: 'inotify',
    readResidency,
    scanNow: () =>
      afterOverflow.scanNow(() => {
        drain();
        sweep();
      }),
    stop: () => {
      stopping ??= (async () => {
        stopped = true;
        clearTimeout(drainTimer);
        clearInterval(sweepTimer);
        await afterOverflow.settled();
        // Closing the descriptor removes every watch (inotify(7)).
        libc.close(fd);
        return { ...stats, events: { ...counters } };
      })();
      return stopping;
    },
  };
  return { ok: true, keeper };
}

function readProcNumber(file: string): number | null {
  const text = readTextOrNull(file)?.trim() ?? '';
  return /^\d+$/.test(text) ? Number(text) : null;
}
