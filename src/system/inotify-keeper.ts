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
// closes per path and takes that many later closes of the path as its own,
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
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { EAGAIN, IN, O_RDONLY_CLOEXEC, type LibcBindings } from './libc.js';
import { forEachInotifyEvent } from './inotify.js';
import { adviseDontNeed, residentBytesOfFd, type FileRef } from './page-cache.js';
import { errnoError, errnoName, errorCode } from './errno.js';
import { keeperMeter, sweepFilePages } from './page-sweep.js';
import { CacheLru } from './cache-lru.js';
import { datasetIndex, type DatasetIndex } from './keeper-dataset.js';
import { readTextOrNull } from './read-text.js';
import { emptyKeeperStats, type ColdKeeper, type ColdKeeperStats, type EventKeeperStats } from './keeper-types.js';

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
const FILES_PER_TURN = 256;
const DEFAULT_QUEUED_EVENTS = 16384;

/** Bytes of the files whose size is known. */
function knownBytes(dataset: DatasetIndex): number {
  let bytes = 0;
  for (let k = 0; k < dataset.count; k++) bytes += Math.max(0, dataset.sizeAt(k));
  return bytes;
}

/** Every dataset path not in `held` (for a cap whose other files are few enough to read them all). */
function allPathsExcept(dataset: DatasetIndex, held: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (let k = 0; k < dataset.count; k++) {
    const path = dataset.pathAt(k);
    if (!held.has(path)) out.push(path);
  }
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
  const dataset = datasetIndex(files);
  const dirs = dataset.dirs;
  const limitReason = watchLimitReason(dirs.length, readProcNumber('/proc/sys/fs/inotify/max_user_watches'));
  if (limitReason) return { ok: false, reason: limitReason };

  const fd = libc.inotifyInit1(IN.nonblock | IN.cloexec);
  if (fd < 0) return { ok: false, reason: MESSAGES.initFailed(errnoName(-fd)) };
  const dirByWd = new Map<number, string>();
  for (const dir of dirs) {
    const wd = libc.inotifyAddWatch(fd, dir, WATCH_MASK);
    if (wd < 0) {
      libc.close(fd);
      return { ok: false, reason: MESSAGES.watchFailed(dir, errnoName(-wd)) };
    }
    dirByWd.set(wd, dir);
  }

  const queueCapacity = readProcNumber('/proc/sys/fs/inotify/max_queued_events') ?? DEFAULT_QUEUED_EVENTS;
  const buffer = Buffer.alloc(EVENT_BUFFER_BYTES);
  const meter = keeperMeter(libc);
  const counters: EventKeeperStats = {
    watchedDirs: dirByWd.size,
    closeEvents: 0,
    closeEvictions: 0,
    sweepEvictions: 0,
    queueOverflows: 0,
    overflowSweptFiles: 0,
    lostWatches: 0,
  };
  const stats: ColdKeeperStats = { ...emptyKeeperStats('inotify'), events: counters };
  // Closes still to come from the keeper's own opens, per path.
  const ownCloses = new Map<string, number>();
  // Files read and not closed since, with the sweeps in a row that found them idle.
  const reading = new Map<string, number>();
  // Pages of swept files seen resident at the previous sweep (page-sweep.ts).
  const previous = new Map<string, Uint8Array>();
  // Files closed and still cached, least recently closed first; evicted at the
  // end of each drain down to the cap (all of them for a cold keeper).
  const lru = new CacheLru();
  // Cap: resident bytes of the files being read, at the last sweep.
  const openResident = new Map<string, number>();
  const openBytes = (): number => {
    let total = 0;
    for (const bytes of openResident.values()) total += bytes;
    return total;
  };
  const sizeOf = (path: string): number => {
    const known = dataset.size(path) ?? -1;
    if (known >= 0) return known;
    try {
      return fs.statSync(path).size;
    } catch {
      return 0;
    }
  };
  let overflowPending = false;
  let overflowSweep: Promise<void> | undefined;
  let stopped = false;
  let drainTimer: NodeJS.Timeout | undefined;

  const fail = (path: string, error: unknown): void => {
    stats.errors++;
    stats.lastError = `${path}: ${errorCode(error)}`;
  };
  const metered = (work: () => void): void => {
    const started = meter.start();
    try {
      work();
    } finally {
      stats.cpuSec += meter.stop(started);
    }
  };

  // Opens `path` for the keeper's own use; its close event is then expected and ignored.
  const withOwnDescriptor = (path: string, work: (fd: number) => void): void => {
    const own = libc.open(path, O_RDONLY_CLOEXEC);
    if (own < 0) throw errnoError(-own, 'open');
    try {
      work(own);
    } finally {
      libc.close(own);
      ownCloses.set(path, (ownCloses.get(path) ?? 0) + 1);
    }
  };

  // Returns the bytes advised out: the file's size.
  const evictWhole = (path: string): number => {
    let bytes = dataset.size(path) ?? -1;
    withOwnDescriptor(path, (own) => {
      if (bytes < 0) bytes = fs.fstatSync(own).size;
      adviseDontNeed(libc, own, 0, 0);
    });
    return bytes;
  };

  const onEvent = (wd: number, mask: number, name: string): void => {
    if (mask & IN.queueOverflow) {
      counters.queueOverflows++;
      // Lost events may include reads, closes and the keeper's own closes:
      // what the keeper believed about them is void. The sweep that follows
      // evicts every file instead.
      ownCloses.clear();
      reading.clear();
      previous.clear();
      overflowPending = true;
      return;
    }
    if (mask & IN.ignored) {
      if (dirByWd.delete(wd)) counters.lostWatches++;
      return;
    }
    if (mask & IN.isDir || name === '') return;
    const dir = dirByWd.get(wd);
    if (dir === undefined) return;
    const path = `${dir}/${name}`;
    // The keeper's own closes and repeated reads are settled from its maps, which hold only
    // dataset paths, before the dataset's table is searched (once per event at most).
    const own = mask & IN.access ? undefined : ownCloses.get(path);
    if (own !== undefined) {
      if (own > 1) ownCloses.set(path, own - 1);
      else ownCloses.delete(path);
      return;
    }
    if (mask & IN.access && reading.has(path)) return;
    const size = dataset.size(path);
    if (size === undefined) return;
    if (mask & IN.access) {
      // Read again: it is in use, not in the LRU, until its next close.
      reading.set(path, 0);
      lru.remove(path);
      return;
    }
    counters.closeEvents++;
    reading.delete(path);
    openResident.delete(path);
    lru.closed(path, size >= 0 ? size : sizeOf(path));
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
    for (const path of lru.overBudget(capBytes - openBytes())) {
      previous.delete(path);
      try {
        stats.reEvictedBytes += evictWhole(path);
        stats.reEvictions++;
        counters.closeEvictions++;
        evicted++;
      } catch (error) {
        fail(path, error);
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
    for (const path of previous.keys()) if (!reading.has(path)) previous.delete(path);
    for (const [path, idle] of reading) {
      let active = false;
      try {
        withOwnDescriptor(path, (own) => {
          const swept = sweepFilePages(libc, own, path, previous.get(path));
          active = !swept.blind && (swept.arrived !== undefined || swept.evictedBytes > 0);
          if (swept.arrived) previous.set(path, swept.arrived);
          else previous.delete(path);
          if (swept.blind) stats.blindEvictions++;
          else if (swept.evictedBytes > 0) {
            stats.reEvictions++;
            stats.reEvictedBytes += swept.evictedBytes;
            counters.sweepEvictions++;
          }
        });
      } catch (error) {
        fail(path, error);
      }
      if (active) reading.set(path, 0);
      else if (idle + 1 < IDLE_SWEEPS) reading.set(path, idle + 1);
      else {
        // Closed while its close merged into another, or open and idle: a
        // later read brings it back (IN_ACCESS).
        reading.delete(path);
        previous.delete(path);
      }
    }
    stats.sweeps++;
    // The sweep's own events, read now for the reason given at drain().
    readEvents();
  };

  // A file's resident bytes through the keeper's own descriptor (an open, an
  // mmap and a mincore: tens of microseconds), or null when it cannot be read.
  const residentOrNull = (path: string): number | null => {
    let bytes: number | null = null;
    try {
      withOwnDescriptor(path, (own) => {
        const resident = residentBytesOfFd(libc, own, sizeOf(path));
        if (resident < 0) throw errnoError(-resident, 'mincore');
        bytes = resident;
      });
    } catch (error) {
      fail(path, error);
    }
    return bytes;
  };
  // Cap: the files being read are measured, not swept; they count against the
  // cap as the most recently used. Idle ones enter the LRU as if closed. Only
  // when they alone hold more than the cap are their old pages swept.
  const measureOpen = (): void => {
    for (const [path, idle] of reading) {
      const bytes = residentOrNull(path) ?? openResident.get(path) ?? 0;
      const active = bytes !== openResident.get(path);
      openResident.set(path, bytes);
      if (active) reading.set(path, 0);
      else if (idle + 1 < IDLE_SWEEPS) reading.set(path, idle + 1);
      else {
        reading.delete(path);
        openResident.delete(path);
        lru.closed(path, bytes);
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

  // After lost events: every file evicted once, in chunks, draining between
  // chunks so the keeper's own events cannot overflow the queue again.
  const sweepAfterOverflow = async (): Promise<void> => {
    while (overflowPending && !stopped) {
      overflowPending = false;
      let chunk: string[] = [];
      const evictChunk = (): void => {
        for (const path of chunk) {
          try {
            evictWhole(path);
            counters.overflowSweptFiles++;
          } catch (error) {
            fail(path, error);
          }
        }
        chunk = [];
      };
      for (let k = 0; k < dataset.count; k++) {
        const path = dataset.pathAt(k);
        // The cap keeps what its LRU holds; anything else may have been read unseen.
        if (lru.has(path)) continue;
        chunk.push(path);
        if (chunk.length < FILES_PER_TURN) continue;
        metered(evictChunk);
        metered(drain);
        await yieldToLoop();
        if (stopped) return;
      }
      metered(evictChunk);
      metered(drain);
    }
  };
  const startOverflowSweep = (): void => {
    if (!overflowPending || overflowSweep) return;
    overflowSweep = sweepAfterOverflow()
      .catch((error: unknown) => fail('(overflow sweep)', error))
      .finally(() => (overflowSweep = undefined));
  };

  const tick = (): void => {
    if (stopped) return;
    let events = 0;
    metered(() => (events = drain()));
    startOverflowSweep();
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
  const residentOf = (path: string): number => residentOrNull(path) ?? 0;
  // Resident bytes of `group` (total size `groupBytes`): every file when it has
  // at most `sample`, else a random sample scaled by bytes.
  const estimate = (pick: (k: number) => string, count: number, groupBytes: number, sample: number, random: () => number) => {
    if (count <= sample) {
      let resident = 0;
      for (let k = 0; k < count; k++) resident += residentOf(pick(k));
      return { resident, measured: count, exact: true };
    }
    let resident = 0;
    let bytes = 0;
    for (let k = 0; k < sample; k++) {
      const path = pick(Math.floor(random() * count));
      resident += residentOf(path);
      bytes += sizeOf(path);
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
      for (const path of held) heldSizeBytes += sizeOf(path);
      datasetBytes ??= knownBytes(dataset);
      const others = dataset.count - held.length;
      const inHeld = estimate((k) => held[k], held.length, heldSizeBytes, sampleFiles, random);
      // Others by rejection: held files are drawn again (a cap holds at most most of the dataset).
      const pickOther = (k: number): string => {
        if (others === dataset.count) return dataset.pathAt(k);
        for (let tries = 0; tries < 64; tries++) {
          const path = dataset.pathAt(Math.floor(random() * dataset.count));
          if (!heldSet.has(path)) return path;
        }
        for (let j = 0; j < dataset.count; j++) if (!heldSet.has(dataset.pathAt(j))) return dataset.pathAt(j);
        return dataset.pathAt(0);
      };
      const exactOthers = others <= sampleFiles;
      const otherPaths = exactOthers ? allPathsExcept(dataset, heldSet) : null;
      const inOthers =
        others === 0
          ? { resident: 0, measured: 0, exact: true }
          : estimate((k) => (otherPaths ? otherPaths[k] : pickOther(k)), others, Math.max(0, datasetBytes - heldSizeBytes), sampleFiles, random);
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
    scanNow: async () => {
      if (stopped) return;
      await overflowSweep;
      metered(() => {
        drain();
        sweep();
      });
      startOverflowSweep();
      await overflowSweep;
    },
    stop: () => {
      stopping ??= (async () => {
        stopped = true;
        clearTimeout(drainTimer);
        clearInterval(sweepTimer);
        await overflowSweep;
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
