// Page-cache control for the cached and cold modes: residency by cachestat(2) (Linux 6.5) or mmap + mincore, eviction
// by posix_fadvise(DONTNEED) after one syncfs(2) per file system (an fdatasync a file cost 1.5 min at 1.28M files),
// warming, and drop_caches.
import fs from 'node:fs';
import pathModule from 'node:path';
import { ExitCode, UserError } from '../../errors.js';
import { FADV, loadLibc, type LibcBindings, type LibcLoad } from '../kernel/libc.js';
import { O_DIRECTORY_CLOEXEC, type FileSyscalls } from '../kernel/file-syscalls.js';
import { tableOf } from '../dataset/file-table.js';
import { errnoError, errnoName, errorCode } from '../kernel/errno.js';
import type { CpuAccount } from '../kernel/cpu-ledger.js';
import { PAGE_CACHE_TEXT } from './page-cache-text.js';
import {
  ResidencyProbe,
  emptyResidency,
  forEachOpenFile,
  isPrivileged,
  perFileCalls,
  scanFilePages,
  systemBindings,
  measureResidency,
  type PageCacheBindings,
} from './file-pages.js';

export { mincoreIsTrustworthy, residentBytesOfFd, scanFilePages, type PageCacheBindings } from './file-pages.js';
export { warm, type WarmResult } from './warm.js';

/** A file to act on; only the path is used (sizes are re-read with fstat). */
export interface FileRef {
  /** Path of a regular file. */
  path: string;
}

/** How much of a set of files sits in the page cache. */
export interface Residency {
  /** Bytes of the checked files that are resident (whole pages, capped at each file's size). */
  residentBytes: number;
  /** Bytes of the files whose residency was checked. */
  totalBytes: number;
  /** residentBytes / totalBytes; 0 when nothing could be checked. */
  fraction: number;
  /** Files checked (empty files excluded). */
  checkedFiles: number;
  /** Files whose residency is unknown: unreadable, vanished, or mincore not trustworthy for them. */
  unknownFiles: number;
  /** Bytes of the unknown files, where their size could be read. */
  unknownBytes: number;
  /** Why some files are unknown (the first cause met), if any are. */
  unknownReason?: string;
}

/** The outcome of evicting files from the page cache. */
export interface EvictResult {
  /** Files advised out of the cache. */
  files: number;
  /** Bytes of those files. */
  bytes: number;
  /** Files that could not be opened, synced or advised. */
  failedFiles: number;
  /** Files left alone because none of their pages was cached (empty files among them). */
  nonResidentFiles: number;
  /** Bytes still resident after it (each advised file checked again); absent when some file could not be read. */
  residentBytesAfter?: number;
  /** The first failure, as 'path: CODE', if any. */
  firstError?: string;
  /** Wall time of the whole eviction. */
  elapsedMs: number;
}

/** What this machine's page-cache control can do. */
export interface PageCacheSupport {
  /** posix_fadvise eviction is available. */
  evict: boolean;
  /** mmap + mincore residency is available. */
  residency: boolean;
  /** Why something is unavailable or limited. */
  reason?: string;
}

/** Probes libc once (and mincore on a real file) and says what is available. */
export function pageCacheSupport(): PageCacheSupport {
  const load = loadLibc();
  if (!load.ok) return { evict: false, residency: false, reason: load.reason };
  let residencyOk = true;
  let reason: string | undefined;
  try {
    const fd = fs.openSync(process.execPath, 'r');
    try {
      const size = fs.fstatSync(fd).size;
      const errno = scanFilePages(load.libc, fd, Math.min(size, 1 << 20), () => undefined);
      if (errno !== 0) {
        residencyOk = false;
        reason = `mincore failed (${errnoName(errno)})`;
      }
    } finally {
      fs.closeSync(fd);
    }
  } catch (error) {
    residencyOk = false;
    reason = `cannot probe mincore (${errorCode(error)})`;
  }
  if (residencyOk && !isPrivileged()) reason = PAGE_CACHE_TEXT.mincoreUntrusted;
  return { evict: true, residency: residencyOk, ...(reason ? { reason } : {}) };
}

/** How much of `files` is in the page cache (ownership or write access needed unless root); work charged to `cpu`. */
export async function residency(
  files: readonly FileRef[],
  bindings: PageCacheBindings = systemBindings(),
  options: { cpu?: CpuAccount } = {},
): Promise<Residency> {
  const libc = requireLibc(bindings.libc);
  const calls = perFileCalls(bindings.calls);
  return measureResidency(files, calls, new ResidencyProbe(libc, calls), options.cpu, emptyResidency());
}

/** Drops `files` from the page cache without root; with `sync`, their file systems' dirty pages are written first. */
export async function evict(
  files: readonly FileRef[],
  options: {
    sync: boolean;
    /** Charged with the eviction's CPU (a CPU ledger's 'eviction'). */
    cpu?: CpuAccount;
  },
  bindings: PageCacheBindings = systemBindings(),
): Promise<EvictResult> {
  const libc = requireLibc(bindings.libc);
  const calls = perFileCalls(bindings.calls);
  const started = performance.now();
  const result: EvictResult = { files: 0, bytes: 0, failedFiles: 0, nonResidentFiles: 0, elapsedMs: 0 };
  if (options.sync) {
    const cpu = options.cpu;
    if (cpu) cpu.charge(() => syncFileSystems(libc, calls, files));
    else syncFileSystems(libc, calls, files);
  }
  // A file with no cached page (one cachestat, ~1 us) gets no advice: before 6.6, DONTNEED on a range it could not
  // wholly drop calls lru_add_drain_all(), which interrupts every CPU.
  const probe = new ResidencyProbe(libc, calls);
  let residentAfter: number | null = 0;
  await forEachOpenFile(
    files,
    calls,
    options.cpu,
    (cursor) => {
      if (probe.residentBytes(cursor) === 0) {
        result.nonResidentFiles++;
        return;
      }
      adviseDontNeed(libc, cursor.fd, 0, 0);
      result.bytes += cursor.bytes;
      result.files++;
      // Pages DONTNEED could not drop (dirty, mapped by another process) stay: count them, so no second pass is needed.
      const left = probe.residentBytes(cursor);
      residentAfter = typeof left === 'number' && residentAfter !== null ? residentAfter + left : null;
    },
    (cursor, code) => {
      residentAfter = null;
      result.failedFiles++;
      result.firstError ??= `${cursor.path()}: ${code}`;
    },
  );
  if (residentAfter !== null) result.residentBytesAfter = residentAfter;
  result.elapsedMs = performance.now() - started;
  return result;
}

/** syncfs(2) once on each file system holding the files' directories; sync(2) where syncfs fails. */
function syncFileSystems(libc: LibcBindings, calls: FileSyscalls, files: readonly FileRef[]): void {
  const table = tableOf(files);
  const dirs = new Set<string>(table ? table.prefixes.map((prefix) => prefix || '.') : []);
  if (!table) for (const file of files) dirs.add(pathModule.dirname(file.path));
  const synced = new Set<number>();
  for (const dir of dirs) {
    let dev: number;
    try {
      dev = fs.statSync(dir).dev;
    } catch {
      continue;
    }
    if (synced.has(dev)) continue;
    synced.add(dev);
    const fd = calls.open(dir, O_DIRECTORY_CLOEXEC);
    const result = fd < 0 ? fd : calls.syncfs(fd);
    if (fd >= 0) calls.close(fd);
    if (result < 0) {
      libc.sync();
      return;
    }
  }
}

/** posix_fadvise(fd, offset, length, DONTNEED); length 0 means to the end of the file. */
export function adviseDontNeed(libc: LibcBindings, fd: number, offsetBytes: number, lengthBytes: number): void {
  const result = libc.posixFadvise(fd, offsetBytes, lengthBytes, FADV.dontNeed);
  if (result < 0) throw errnoError(-result, 'posix_fadvise');
}

/** Writes back all dirty data, then drops the machine's page cache, dentries and inodes; a UserError without root. */
export async function dropCachesGlobally(): Promise<void> {
  const load = loadLibc();
  if (load.ok) load.libc.sync();
  else {
    const { execa } = await import('execa');
    await execa('sync').catch(() => undefined);
  }
  try {
    await fs.promises.writeFile('/proc/sys/vm/drop_caches', '3');
  } catch (error) {
    throw new UserError(PAGE_CACHE_TEXT.dropCachesDenied(errorCode(error)), ExitCode.Environment);
  }
}

function requireLibc(load: LibcLoad): LibcBindings {
  if (!load.ok) throw new UserError(PAGE_CACHE_TEXT.unsupported(load.reason), ExitCode.Environment);
  return load.libc;
}
