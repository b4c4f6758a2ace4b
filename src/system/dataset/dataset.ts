// The dataset as the page-cache code sees it: every regular file under the --data roots, its size, the block device it
// lives on, and whether it can fit in memory at all (the cached mode is only honest when it can).
import fs from 'node:fs';
import { inputError } from '../../errors.js';
import { loadFileSyscalls } from '../kernel/file-syscalls.js';
import { errorCode } from '../kernel/errno.js';
import { wholeDiskDevice } from '../kernel/block-device.js';
import { jobMemoryBudget } from '../cgroups/memory-budget.js';
import { meminfoBytes } from '../kernel/read-text.js';
import { fileView } from './file-table.js';
import { nearestRank } from '../../quantile.js';
import type { DataSourceRecord, Profile } from '../../schema/profile.js';
import { rootFileSystems, type RootFileSystem } from './file-systems.js';
import { DatasetWalk, SLOW_SYNC_STAT_US } from './walk.js';

// Messages shown to users, in one table (size-limit's MESSAGES pattern).
const FIX = 'pass the folder that holds the training files';
const MESSAGES = {
  missing: (flag: string, root: string) => `${flag} ${root}: no such directory; ${FIX}`,
  denied: (flag: string, root: string) =>
    `${flag} ${root}: permission denied; pass a folder you can read, or run as a user who can read it`,
  notFileOrDir: (flag: string, root: string) => `${flag} ${root}: not a regular file or directory; ${FIX}`,
  unreadable: (flag: string, root: string, code: string) => `${flag} ${root}: cannot read it (${code}); ${FIX}`,
  empty: (flag: string, root: string) => `${flag} ${root}: no non-empty regular files found; ${FIX}`,
  noRoots: (flag: string) => `${flag} is empty; ${FIX}`,
} as const;

/** One file of the dataset. */
export interface DatasetFile {
  /** Path as reached from the root (symlinks are not resolved). */
  path: string;
  /** Size in bytes. */
  bytes: number;
}

/** File-size distribution, nearest-rank quantiles over files, bytes. */
export type FileBytesQuantiles = Profile['dataset']['fileBytesQuantiles'];

/** Every regular file under the roots, and what the cache modes need to know about them. */
export interface Dataset {
  /** The roots as given. */
  roots: string[];
  /** Regular files (empty ones included) in path order: a read-only view of a file table, built on access. */
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
  /** Where memoryBudgetBytes came from: MemAvailable, or the limiting memory cgroup; absent from fakes. */
  memoryBudgetSource?: string;
  /** Entries below the roots that could not be read (permission, vanished mid-walk) and were left out. */
  skippedEntries: number;
  /** The first skipped entry, as 'path: CODE', if any. */
  firstSkipped?: string;
  /** The file system of each root, and what it allows (see file-systems.ts); absent from fakes. */
  fileSystems?: RootFileSystem[];
  /** Remote data: where it is fetched from, as the profile records it; absent for local files. */
  remote?: RemoteDataset;
  /** Data on a FUSE mount whose daemon is metered (schema/profile.ts dataset.mount); absent otherwise. */
  mount?: Profile['dataset']['mount'];
  /** The source that listed it, as the profile records it (schema/profile.ts `source`); absent from fakes. */
  source?: DataSourceRecord;
  /** Mean bytes of one sample where a file holds many (tar shards); absent: one file, one sample (meanFileBytes). */
  sampleBytes?: number;
}

/** Where remote data comes from, without credentials (the profile's dataset.remote); samplesPerObject always set. */
export type RemoteDataset = NonNullable<Profile['dataset']['remote']> & { samplesPerObject: number | null };

/** Options of listDataset; the defaults suit the CLI. */
export interface ListDatasetOptions {
  /** The flag the roots came from, named in error messages. */
  flag?: string;
  /** Parallel stat calls in flight once metadata proves slow to read (walk.ts). */
  concurrency?: number;
  /** Microseconds per sync stat above which (for most stats of a slice) the walk goes parallel; 0 forces parallel. */
  slowStatMicros?: number;
  /** Reads /proc/meminfo (replaceable in tests). */
  readMeminfo?: () => Promise<string>;
  /** Reads /proc/self/mountinfo (replaceable in tests). */
  readMountinfo?: () => Promise<string>;
  /** The roots' file systems as the caller already read them (the source was chosen by them); absent: read here. */
  fileSystems?: readonly RootFileSystem[];
  /** Use fs.statSync instead of statx through koffi (tests of the fallback). */
  nodeStat?: boolean;
}

/** Lists every regular file under the roots (walk.ts); a missing, unreadable or empty root is a UserError. */
export async function listDataset(roots: string[], options: ListDatasetOptions = {}): Promise<Dataset> {
  const flag = options.flag ?? '--data';
  if (roots.length === 0) throw inputError(MESSAGES.noRoots(flag));
  const load = options.nodeStat ? null : loadFileSyscalls();
  const walk = new DatasetWalk({
    concurrency: Math.max(1, options.concurrency ?? 32),
    slowStatMicros: options.slowStatMicros ?? SLOW_SYNC_STAT_US,
    calls: load?.ok ? load.calls : null,
  });
  for (const root of roots) await addRoot(walk, root, flag);
  const table = walk.builder.build();
  const bytes = table.totalBytes();
  const budget = jobMemoryBudget(
    await memoryBudget(options.readMeminfo ?? (() => fs.promises.readFile('/proc/meminfo', 'utf8'))),
  );
  const memoryBudgetBytes = budget.bytes;
  const fileSystems = options.fileSystems
    ? [...options.fileSystems]
    : await rootFileSystems(roots, options.readMountinfo);
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
    skippedEntries: walk.skippedEntries,
    ...(walk.firstSkipped ? { firstSkipped: walk.firstSkipped } : {}),
    ...(fileSystems.length > 0 ? { fileSystems } : {}),
  };
}

/** Adds one root (a directory or a single file) to the walk; a missing, unreadable or empty root is a UserError. */
async function addRoot(walk: DatasetWalk, root: string, flag: string): Promise<void> {
  let stat: fs.BigIntStats;
  try {
    stat = await fs.promises.stat(root, { bigint: true });
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') throw inputError(MESSAGES.missing(flag, root));
    if (code === 'EACCES' || code === 'EPERM') throw inputError(MESSAGES.denied(flag, root));
    throw inputError(MESSAGES.unreadable(flag, root, code));
  }
  const before = walk.builder.nonEmptyFiles;
  if (stat.isFile()) walk.addFile(root, stat);
  else if (stat.isDirectory()) await walk.addDirectory(root, stat);
  else throw inputError(MESSAGES.notFileOrDir(flag, root));
  if (walk.builder.nonEmptyFiles === before) throw inputError(MESSAGES.empty(flag, root));
}

/** Nearest-rank quantiles (q(p) = sorted[ceil(p * n) - 1]): every value is a real file size. */
export function fileBytesQuantiles(sizes: ArrayLike<number>): FileBytesQuantiles {
  if (sizes.length === 0) return { p10: 0, p50: 0, p90: 0, max: 0 };
  const sorted = Float64Array.from(sizes).sort();
  return {
    p10: nearestRank(sorted, 0.1),
    p50: nearestRank(sorted, 0.5),
    p90: nearestRank(sorted, 0.9),
    max: sorted[sorted.length - 1],
  };
}

// The share of MemAvailable the dataset may take; the rest is the job's own (model, workers, pinned buffers).
const MEMORY_HEADROOM = 0.9;

/** 90% of MemAvailable (which counts the reclaimable page cache already); null when /proc/meminfo is unreadable. */
export async function memoryBudget(readMeminfo: () => Promise<string>): Promise<number | null> {
  let text: string;
  try {
    text = await readMeminfo();
  } catch {
    return null;
  }
  const kib = (name: string): number | null => meminfoBytes(text, name);
  // Kernels before 3.14 lack MemAvailable; MemFree + Cached is the usual stand-in.
  const available = kib('MemAvailable') ?? sumOrNull(kib('MemFree'), kib('Cached'));
  return available === null ? null : Math.floor(available * MEMORY_HEADROOM);
}

function sumOrNull(a: number | null, b: number | null): number | null {
  return a === null || b === null ? null : a + b;
}
