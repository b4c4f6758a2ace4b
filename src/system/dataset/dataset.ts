// The dataset as the page-cache code sees it: every regular file under the
// --data roots, its size, the block device it lives on, and whether it can fit
// in memory at all (the cached mode is only honest when it can).
import fs from 'node:fs';
import path from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { inputError } from '../../errors.js';
import { O_DIRECTORY_CLOEXEC, S_IFDIR, S_IFREG, loadFileSyscalls } from '../kernel/file-syscalls.js';
import { FileTableBuilder, fileView } from './file-table.js';
import { rootFileSystems, type RootFileSystem } from './file-systems.js';
import { errnoError, errorCode } from '../kernel/errno.js';
import { jobMemoryBudget, type ReadKernelFile } from '../cgroups/memory-budget.js';
import { splitDev, wholeDiskDevice } from '../kernel/block-device.js';

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
  /**
   * Regular files (empty ones included), directory by directory in path order,
   * names sorted within a directory. A read-only view of a compact table (see
   * file-table.ts): elements are built on access.
   */
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
  /** Where memoryBudgetBytes came from: MemAvailable, or the memory cgroup that limits it (memory-budget.ts); absent from fakes. */
  memoryBudgetSource?: string;
  /** Entries below the roots that could not be read (permission, vanished mid-walk) and were left out. */
  skippedEntries: number;
  /** The first skipped entry, as 'path: CODE', if any. */
  firstSkipped?: string;
  /** The file system of each root, and what it allows (see file-systems.ts); absent from fakes. */
  fileSystems?: RootFileSystem[];
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
  /** Reads /proc/self/mountinfo (replaceable in tests). */
  readMountinfo?: () => Promise<string>;
  /** Reads the memory cgroup's files (replaceable in tests; see memory-budget.ts). */
  readCgroupFile?: ReadKernelFile;
  /** Use fs.statSync instead of statx through koffi (tests of the fallback). */
  nodeStat?: boolean;
}

// Entries stat'ed synchronously between two turns of the event loop.
const SYNC_SLICE_ENTRIES = 512;
// When most sync stats of a slice take longer than this, metadata is coming from storage: go parallel.
const SLOW_SYNC_STAT_US = 200;

/** What a stat said about one entry. */
interface EntryStat {
  kind: 'file' | 'dir' | 'other';
  bytes: number;
  uid: number;
  /** 'major:minor:inode'. */
  key: string;
}

/**
 * Walks the roots (directories or single files) and lists every regular file
 * with its size. Symlinks are followed, to files and to directories, but a
 * directory already visited (same device and inode) is not entered again, so
 * symlink loops end. A missing, unreadable or empty root is a UserError.
 *
 * Directory by directory: readdir, then one stat per entry. Sync stats first
 * (statx on the directory's descriptor through koffi, 2.2 us a file here,
 * against 4.5 us for fs.statSync and 30-60 us of thread-pool hand-off for an
 * async stat); when most sync stats of a slice turn slow (metadata read from a
 * cold disk or a network file system) the rest goes to `concurrency` parallel
 * async stats, which overlap the I/O. Files go straight into a compact table.
 */
export async function listDataset(roots: string[], options: ListDatasetOptions = {}): Promise<Dataset> {
  const flag = options.flag ?? '--data';
  const concurrency = Math.max(1, options.concurrency ?? 32);
  let parallel = (options.slowStatMicros ?? SLOW_SYNC_STAT_US) <= 0;
  const slowStatMicros = options.slowStatMicros ?? SLOW_SYNC_STAT_US;
  if (roots.length === 0) throw inputError(MESSAGES.noRoots(flag));
  const load = options.nodeStat ? null : loadFileSyscalls();
  const calls = load?.ok ? load.calls : null;
  const uid = typeof process.geteuid === 'function' ? process.geteuid() : -1;
  const privileged = uid === 0;

  const builder = new FileTableBuilder();
  const visitedDirs = new Set<string>();
  let skippedEntries = 0;
  let firstSkipped: string | undefined;
  const skip = (entry: string, error: unknown): void => {
    skippedEntries++;
    firstSkipped ??= `${entry}: ${errorCode(error)}`;
  };
  const isForeign = (owner: number): boolean => !privileged && owner !== uid;

  const statSync = (dirFd: number, prefix: string, name: string): EntryStat => {
    if (calls && dirFd >= 0) {
      const facts = calls.statx(dirFd, Buffer.from(`${name}\0`));
      if (typeof facts === 'number') throw errnoError(-facts);
      return { kind: facts.type === S_IFREG ? 'file' : facts.type === S_IFDIR ? 'dir' : 'other', bytes: facts.bytes, uid: facts.uid, key: facts.key };
    }
    return fromStats(fs.statSync(prefix + name, { bigint: true }));
  };

  // One directory: its entries, stat'ed; files into the table, sub-directories returned.
  const readDirectory = async (dir: string, prefix: string): Promise<string[]> => {
    let entries: fs.Dirent[];
    try {
      entries = parallel ? await fs.promises.readdir(dir, { withFileTypes: true }) : fs.readdirSync(dir, { withFileTypes: true });
    } catch (error) {
      skip(dir, error);
      return [];
    }
    // Hidden entries (.cache, .git, a generator's manifest) are not samples, as
    // for torchvision's ImageFolder and most loaders; sockets, FIFOs and
    // devices are not training data.
    const names: string[] = [];
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      if (entry.isFile() || entry.isSymbolicLink() || entry.isDirectory() || isUnknownType(entry)) names.push(entry.name);
    }
    entries = [];
    const files: { name: string; bytes: number; foreign: boolean }[] = [];
    const subdirs: string[] = [];
    const take = (name: string, stat: EntryStat): void => {
      if (stat.kind === 'file') files.push({ name, bytes: stat.bytes, foreign: isForeign(stat.uid) });
      else if (stat.kind === 'dir' && !visitedDirs.has(stat.key)) {
        visitedDirs.add(stat.key);
        subdirs.push(prefix + name);
      }
    };
    let next = 0;
    if (!parallel) {
      const dirFd = calls ? calls.open(dir, O_DIRECTORY_CLOEXEC) : -1;
      try {
        while (next < names.length && !parallel) {
          const sliceEnd = Math.min(names.length, next + SYNC_SLICE_ENTRIES);
          let done = 0;
          let slow = 0;
          for (; next < sliceEnd; next++, done++) {
            const started = performance.now();
            try {
              take(names[next], statSync(dirFd, prefix, names[next]));
            } catch (error) {
              skip(prefix + names[next], error);
            } finally {
              if ((performance.now() - started) * 1000 > slowStatMicros) slow++;
            }
          }
          // Most stats of the slice slow, not a few: a busy CPU preempts a few calls
          // for long, a cold disk slows them all.
          if (slow > done / 2) parallel = true;
          else if (next < names.length) await yieldToLoop();
        }
      } finally {
        if (dirFd >= 0) calls?.close(dirFd);
      }
    }
    const worker = async (): Promise<void> => {
      while (next < names.length) {
        const name = names[next++];
        try {
          take(name, fromStats(await fs.promises.stat(prefix + name, { bigint: true })));
        } catch (error) {
          skip(prefix + name, error);
        }
      }
    };
    if (next < names.length) await Promise.all(Array.from({ length: Math.min(concurrency, names.length - next) }, worker));
    builder.addDirectory(prefix, files);
    // In order of prefix (name + '/'), so that a depth-first walk adds directories in path order.
    return subdirs.sort((a, b) => (`${a}/` < `${b}/` ? -1 : `${a}/` > `${b}/` ? 1 : 0));
  };

  const walk = async (rootDir: string, rootKey: string): Promise<void> => {
    if (visitedDirs.has(rootKey)) return;
    visitedDirs.add(rootKey);
    const queue = [rootDir];
    while (queue.length > 0) {
      const dir = queue.pop()!;
      const subdirs = await readDirectory(dir, prefixOf(dir));
      for (let k = subdirs.length - 1; k >= 0; k--) queue.push(subdirs[k]);
      await yieldToLoop();
    }
  };

  for (const root of roots) {
    let stat: fs.BigIntStats;
    try {
      stat = await fs.promises.stat(root, { bigint: true });
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ENOENT' || code === 'ENOTDIR') throw inputError(MESSAGES.missing(flag, root));
      if (code === 'EACCES' || code === 'EPERM') throw inputError(MESSAGES.denied(flag, root));
      throw inputError(MESSAGES.unreadable(flag, root, code));
    }
    const before = builder.nonEmptyFiles;
    if (stat.isFile()) {
      const slash = root.lastIndexOf('/');
      builder.addDirectory(root.slice(0, slash + 1), [{ name: root.slice(slash + 1), bytes: Number(stat.size), foreign: isForeign(Number(stat.uid)) }]);
    } else if (stat.isDirectory()) await walk(path.join(root), fromStats(stat).key);
    else throw inputError(MESSAGES.notFileOrDir(flag, root));
    if (builder.nonEmptyFiles === before) throw inputError(MESSAGES.empty(flag, root));
  }

  const table = builder.build();
  const bytes = table.totalBytes();
  const budget = jobMemoryBudget(await memoryBudget(options.readMeminfo ?? (() => fs.promises.readFile('/proc/meminfo', 'utf8'))), options.readCgroupFile);
  const memoryBudgetBytes = budget.bytes;
  const fileSystems = await rootFileSystems(roots, options.readMountinfo);
  return {
    roots: [...roots],
    files: fileView(table) as DatasetFile[],
    bytes,
    meanFileBytes: bytes / table.length,
    fileBytesQuantiles: fileBytesQuantiles(table.sizes),
    device: await wholeDiskDevice(roots[0]),
    fitsInMemory: memoryBudgetBytes !== null && bytes <= memoryBudgetBytes,
    memoryBudgetBytes,
    memoryBudgetSource: budget.source,
    skippedEntries,
    ...(firstSkipped ? { firstSkipped } : {}),
    ...(fileSystems.length > 0 ? { fileSystems } : {}),
  };
}

/** The prefix of a directory's entries: 'a/b' gives 'a/b/', '/' gives '/', '.' gives ''. */
function prefixOf(dir: string): string {
  if (dir === '.') return '';
  return dir.endsWith('/') ? dir : `${dir}/`;
}

function fromStats(stat: fs.BigIntStats): EntryStat {
  const { major, minor } = splitDev(stat.dev);
  return {
    kind: stat.isFile() ? 'file' : stat.isDirectory() ? 'dir' : 'other',
    bytes: Number(stat.size),
    uid: Number(stat.uid),
    key: `${major}:${minor}:${stat.ino}`,
  };
}

// DT_UNKNOWN: some file systems (older XFS, some FUSE) do not fill d_type; stat decides.
function isUnknownType(entry: fs.Dirent): boolean {
  return !entry.isFile() && !entry.isDirectory() && !entry.isSymbolicLink() && !entry.isFIFO() && !entry.isSocket() && !entry.isBlockDevice() && !entry.isCharacterDevice();
}

/**
 * Nearest-rank quantiles: q(p) = sorted[ceil(p * n) - 1], so every value is a
 * real file size (1..10 gives p10 1, p50 5, p90 9, max 10).
 */
export function fileBytesQuantiles(sizes: ArrayLike<number>): FileBytesQuantiles {
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
 * null when /proc/meminfo cannot be read. The memory cgroup's limit is applied
 * on top of it by jobMemoryBudget (memory-budget.ts).
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
