// The dataset as the page-cache code sees it: every regular file under the
// --data roots, its size, the block device it lives on, and whether it can fit
// in memory at all (the cached mode is only honest when it can).
import fs from 'node:fs';
import path from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { inputError } from '../errors.js';

// Messages shown to users, in one table (size-limit's MESSAGES pattern).
const MESSAGES = {
  missing: (flag: string, root: string) =>
    `${flag} ${root}: no such directory; pass the folder that holds the training files`,
  denied: (flag: string, root: string) =>
    `${flag} ${root}: permission denied; pass a folder you can read, or run as a user who can read it`,
  notFileOrDir: (flag: string, root: string) =>
    `${flag} ${root}: not a regular file or directory; pass the folder that holds the training files`,
  unreadable: (flag: string, root: string, code: string) =>
    `${flag} ${root}: cannot read it (${code}); pass the folder that holds the training files`,
  empty: (flag: string, root: string) =>
    `${flag} ${root}: no non-empty regular files found; pass the folder that holds the training files`,
  noRoots: (flag: string) => `${flag} is empty; pass the folder that holds the training files`,
} as const;

/** One file of the dataset. */
export interface DatasetFile {
  /** Path as reached from the root (symlinks are not resolved). */
  path: string;
  /** Size in bytes. */
  bytes: number;
}

/** File-size distribution, nearest-rank quantiles over files. */
export interface FileBytesQuantiles {
  /** 10th percentile of file sizes, bytes. */
  p10: number;
  /** Median file size, bytes. */
  p50: number;
  /** 90th percentile of file sizes, bytes. */
  p90: number;
  /** Largest file, bytes. */
  max: number;
}

/** Every regular file under the roots, and what the cache modes need to know about them. */
export interface Dataset {
  /** The roots as given. */
  roots: string[];
  /** Regular files (empty ones included), sorted by path. */
  files: DatasetFile[];
  /** Total bytes of all files. */
  bytes: number;
  /** bytes / number of files. */
  meanFileBytes: number;
  /** File-size quantiles. */
  fileBytesQuantiles: FileBytesQuantiles;
  /** 'major:minor' of the whole-disk block device under the first root; null for tmpfs, overlay, NFS... */
  device: string | null;
  /** Whether the dataset can be held in the page cache (see memoryBudget()). */
  fitsInMemory: boolean;
  /** The memory the rule compared against, bytes; null when /proc/meminfo could not be read. */
  memoryBudgetBytes: number | null;
  /** Entries below the roots that could not be read (permission, vanished mid-walk) and were left out. */
  skippedEntries: number;
  /** The first skipped entry, as 'path: CODE', if any. */
  firstSkipped?: string;
}

/** Options of listDataset; the defaults suit the CLI. */
export interface ListDatasetOptions {
  /** The flag the roots came from, named in error messages. */
  flag?: string;
  /** Parallel stat calls in flight once metadata proves slow to read (see walk). */
  concurrency?: number;
  /** Microseconds per sync stat above which (for most stats of a slice) the walk goes parallel; 0 forces parallel. */
  slowStatMicros?: number;
  /** Reads /proc/meminfo (replaceable in tests). */
  readMeminfo?: () => Promise<string>;
}

// Entries stat'ed synchronously between two turns of the event loop.
const SYNC_SLICE_ENTRIES = 512;
// When most sync stats of a slice take longer than this, metadata is coming from storage: go parallel.
const SLOW_SYNC_STAT_US = 200;

/**
 * Walks the roots (directories or single files) and lists every regular file
 * with its size. Symlinks are followed, to files and to directories, but a
 * directory already visited (same device and inode) is not entered again, so
 * symlink loops end. A missing, unreadable or empty root is a UserError.
 */
export async function listDataset(roots: string[], options: ListDatasetOptions = {}): Promise<Dataset> {
  const flag = options.flag ?? '--data';
  const concurrency = Math.max(1, options.concurrency ?? 32);
  const slowStatMicros = options.slowStatMicros ?? SLOW_SYNC_STAT_US;
  if (roots.length === 0) throw inputError(MESSAGES.noRoots(flag));

  const files: DatasetFile[] = [];
  const visitedDirs = new Set<string>();
  let skippedEntries = 0;
  let firstSkipped: string | undefined;
  const skip = (entry: string, error: unknown): void => {
    skippedEntries++;
    firstSkipped ??= `${entry}: ${codeOf(error)}`;
  };

  // One queue of paths to stat; a directory's entries are appended as it is read.
  // Sync stat first: with metadata in the dentry/inode caches it costs ~6-13 us,
  // while an async stat costs 30-60 us of thread-pool hand-off (measured on 100k
  // files here, 2 busy cores). When sync stats turn slow (metadata really read
  // from a cold disk or a network file system), the rest goes to `concurrency`
  // parallel async stats, which overlap the I/O.
  const walk = async (rootDir: string, rootStat: fs.Stats): Promise<void> => {
    const queue: string[] = [];
    let head = 0;
    const enterDir = (dir: string, dirStat: fs.Stats): boolean => {
      const key = `${dirStat.dev}:${dirStat.ino}`;
      if (visitedDirs.has(key)) return false;
      visitedDirs.add(key);
      return true;
    };
    const enqueue = (dir: string, entries: fs.Dirent[]): void => {
      for (const entry of entries) {
        // Hidden entries (.cache, .git, a generator's manifest) are not samples,
        // as for torchvision's ImageFolder and most loaders.
        if (entry.name.startsWith('.')) continue;
        // Sockets, FIFOs and devices are not training data.
        if (entry.isFile() || entry.isSymbolicLink() || entry.isDirectory()) queue.push(path.join(dir, entry.name));
      }
    };
    const readDirSync = (dir: string, dirStat: fs.Stats): void => {
      if (!enterDir(dir, dirStat)) return;
      try {
        enqueue(dir, fs.readdirSync(dir, { withFileTypes: true }));
      } catch (error) {
        skip(dir, error);
      }
    };

    readDirSync(rootDir, rootStat);
    while (slowStatMicros > 0 && head < queue.length) {
      const sliceEnd = Math.min(queue.length, head + SYNC_SLICE_ENTRIES);
      let done = 0;
      let slow = 0;
      for (; head < sliceEnd; head++, done++) {
        const entry = queue[head];
        const started = performance.now();
        let stat: fs.Stats;
        try {
          stat = fs.statSync(entry);
        } catch (error) {
          skip(entry, error);
          continue;
        } finally {
          if ((performance.now() - started) * 1000 > slowStatMicros) slow++;
        }
        if (stat.isFile()) files.push({ path: entry, bytes: stat.size });
        else if (stat.isDirectory()) readDirSync(entry, stat);
      }
      // Most stats of the slice slow, not a few: a busy CPU preempts a few calls
      // for long, a cold disk slows them all.
      if (slow > done / 2) break;
      await yieldToLoop();
    }
    if (head >= queue.length) return;

    let active = 0;
    let waiters: (() => void)[] = [];
    const wakeAll = (): void => {
      const woken = waiters;
      waiters = [];
      for (const wake of woken) wake();
    };
    const handle = async (entry: string): Promise<void> => {
      let stat: fs.Stats;
      try {
        stat = await fs.promises.stat(entry);
      } catch (error) {
        skip(entry, error);
        return;
      }
      if (stat.isFile()) files.push({ path: entry, bytes: stat.size });
      else if (stat.isDirectory() && enterDir(entry, stat)) {
        try {
          enqueue(entry, await fs.promises.readdir(entry, { withFileTypes: true }));
        } catch (error) {
          skip(entry, error);
        }
      }
    };
    const worker = async (): Promise<void> => {
      for (;;) {
        if (head < queue.length) {
          const entry = queue[head++];
          active++;
          try {
            await handle(entry);
          } finally {
            active--;
            wakeAll();
          }
        } else if (active === 0) {
          wakeAll();
          return;
        } else {
          await new Promise<void>((resolve) => waiters.push(resolve));
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
  };

  for (const root of roots) {
    let stat: fs.Stats;
    try {
      stat = await fs.promises.stat(root);
    } catch (error) {
      const code = codeOf(error);
      if (code === 'ENOENT' || code === 'ENOTDIR') throw inputError(MESSAGES.missing(flag, root));
      if (code === 'EACCES' || code === 'EPERM') throw inputError(MESSAGES.denied(flag, root));
      throw inputError(MESSAGES.unreadable(flag, root, code));
    }
    const before = files.length;
    if (stat.isFile()) files.push({ path: root, bytes: stat.size });
    else if (stat.isDirectory()) await walk(root, stat);
    else throw inputError(MESSAGES.notFileOrDir(flag, root));
    if (!files.slice(before).some((file) => file.bytes > 0)) throw inputError(MESSAGES.empty(flag, root));
  }

  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  // A root listed twice, or a file root inside a directory root, is one file.
  const unique = files.filter((file, index) => index === 0 || file.path !== files[index - 1].path);
  const bytes = unique.reduce((sum, file) => sum + file.bytes, 0);

  const memoryBudgetBytes = await memoryBudget(options.readMeminfo ?? (() => fs.promises.readFile('/proc/meminfo', 'utf8')));
  return {
    roots: [...roots],
    files: unique,
    bytes,
    meanFileBytes: bytes / unique.length,
    fileBytesQuantiles: fileBytesQuantiles(unique.map((file) => file.bytes)),
    device: await wholeDiskDevice(roots[0]),
    fitsInMemory: memoryBudgetBytes !== null && bytes <= memoryBudgetBytes,
    memoryBudgetBytes,
    skippedEntries,
    ...(firstSkipped ? { firstSkipped } : {}),
  };
}

/**
 * Nearest-rank quantiles: q(p) = sorted[ceil(p * n) - 1], so every value is a
 * real file size (1..10 gives p10 1, p50 5, p90 9, max 10).
 */
export function fileBytesQuantiles(sizes: readonly number[]): FileBytesQuantiles {
  if (sizes.length === 0) return { p10: 0, p50: 0, p90: 0, max: 0 };
  const sorted = Float64Array.from(sizes).sort();
  const at = (p: number): number => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
  return { p10: at(0.1), p50: at(0.5), p90: at(0.9), max: sorted[sorted.length - 1] };
}

// The fraction of MemAvailable the dataset may take; the rest is left to the job
// itself (model, DataLoader workers, pinned buffers), which competes with the
// cache for the same memory.
const MEMORY_HEADROOM = 0.9;

/**
 * The page cache a dataset can count on: 90% of MemAvailable from /proc/meminfo.
 *
 * MemAvailable already includes the reclaimable part of the current page cache
 * (kernel Documentation/filesystems/proc.rst: "calculated from MemFree,
 * SReclaimable, the size of the file LRU lists, and the low watermarks"), so
 * Cached is not added on top: that would count the same pages twice. Returns
 * null when /proc/meminfo cannot be read. A memory cgroup limit on this process
 * is not applied here; the cached mode proves residency with mincore anyway.
 */
export async function memoryBudget(readMeminfo: () => Promise<string>): Promise<number | null> {
  let text: string;
  try {
    text = await readMeminfo();
  } catch {
    return null;
  }
  const kib = (name: string): number | null => {
    const match = new RegExp(`^${name}:\\s+(\\d+)\\s*kB`, 'm').exec(text);
    return match ? Number(match[1]) * 1024 : null;
  };
  // Kernels before 3.14 lack MemAvailable; MemFree + Cached is the usual stand-in.
  const available = kib('MemAvailable') ?? sumOrNull(kib('MemFree'), kib('Cached'));
  return available === null ? null : Math.floor(available * MEMORY_HEADROOM);
}

function sumOrNull(a: number | null, b: number | null): number | null {
  return a === null || b === null ? null : a + b;
}

/**
 * 'major:minor' of the whole disk holding `target`, from stat().dev. A
 * partition (sysfs has /sys/dev/block/M:m/partition) maps to its parent disk,
 * whose sysfs directory is the partition's parent (block/vda/vda1). Null when
 * the file system has no block device (tmpfs, overlay, NFS, btrfs subvolumes).
 */
export async function wholeDiskDevice(target: string, sysfs = '/sys'): Promise<string | null> {
  let dev: bigint;
  try {
    dev = (await fs.promises.stat(target, { bigint: true })).dev;
  } catch {
    return null;
  }
  const { major, minor } = splitDev(dev);
  const node = `${sysfs}/dev/block/${major}:${minor}`;
  try {
    // realpath first: the sysfs entry is a symlink, and path.join would resolve
    // '..' lexically, in /sys/dev/block, instead of in the device tree.
    const real = await fs.promises.realpath(node);
    const isPartition = await fs.promises.access(path.join(real, 'partition')).then(
      () => true,
      () => false,
    );
    if (!isPartition) return `${major}:${minor}`;
    const parent = (await fs.promises.readFile(path.join(path.dirname(real), 'dev'), 'utf8')).trim();
    return /^\d+:\d+$/.test(parent) ? parent : `${major}:${minor}`;
  } catch {
    return null;
  }
}

/** Splits a Linux dev_t into major and minor (glibc's gnu_dev_major/minor encoding). */
export function splitDev(dev: bigint): { major: number; minor: number } {
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
  return { major: Number(major), minor: Number(minor) };
}

function codeOf(error: unknown): string {
  if (error && typeof error === 'object' && 'code' in error && typeof error.code === 'string') return error.code;
  return error instanceof Error ? error.message : String(error);
}
