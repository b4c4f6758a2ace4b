// Page-cache control for the cached and cold modes: measure a dataset's
// residency, evict it file by file, warm it, or drop every cache globally.
//
// Residency is mmap(PROT_READ, MAP_SHARED) + mincore(2) per file, the method of
// util-linux fincore. Eviction is fdatasync + posix_fadvise(POSIX_FADV_DONTNEED),
// which drops a file's clean, unmapped pages without root (see
// Documentation/admin-guide/mm and man 2 posix_fadvise); pages that are dirty,
// under writeback, or mapped by another process stay.
import fs from 'node:fs';
import { constants as osConstants } from 'node:os';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { ExitCode, UserError } from '../errors.js';
import { FADV, MAP_SHARED, PROT_READ, loadLibc, type LibcBindings } from './libc.js';

// Messages shown to users, in one table (size-limit's MESSAGES pattern).
const MESSAGES = {
  unsupported: (reason: string) =>
    `per-file page-cache control is not available here: ${reason}; run on Linux with glibc, or pass --drop-caches as root`,
  dropCachesDenied: (code: string) =>
    `--drop-caches: cannot write /proc/sys/vm/drop_caches (${code}); run as root, or omit --drop-caches to use per-file eviction`,
  mincoreUntrusted:
    'mincore reports page-cache residency only for files you own or may write (Linux >= 5.2); run as the files\' owner or as root',
} as const;

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
  /** The first failure, as 'path: CODE', if any. */
  firstError?: string;
  /** Wall time of the whole eviction. */
  elapsedMs: number;
}

/** The outcome of reading files fully into the page cache. */
export interface WarmResult {
  /** Files read to the end. */
  files: number;
  /** Bytes read. */
  bytesRead: number;
  /** Files that could not be read. */
  failedFiles: number;
  /** The first failure, as 'path: CODE', if any. */
  firstError?: string;
  /** Wall time of the whole warm-up. */
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

// Files handled between yields to the event loop: each costs ~10-20 us of sync
// syscalls, so a few hundred keep a turn of the loop under ~10 ms.
const FILES_PER_TURN = 256;
// mincore window: 64 Ki pages (256 MiB at 4 KiB) per call, so a vector stays 64 KiB
// whatever the file size.
const MINCORE_WINDOW_PAGES = 64 * 1024;

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
  if (residencyOk && !isPrivileged()) reason = MESSAGES.mincoreUntrusted;
  return { evict: true, residency: residencyOk, ...(reason ? { reason } : {}) };
}

/**
 * Calls `visit(firstPage, vec, pages)` for each mincore window of the first
 * `bytes` of the open file `fd`: vec[i] & 1 says whether page firstPage + i is
 * resident. Returns 0 or an errno. Used by residency() and the cold keeper.
 */
export function scanFilePages(
  libc: LibcBindings,
  fd: number,
  bytes: number,
  visit: (firstPage: number, vec: Uint8Array, pages: number) => void,
): number {
  if (bytes <= 0) return 0;
  const pageBytes = libc.pageSizeBytes;
  const address = libc.mmap(bytes, PROT_READ, MAP_SHARED, fd, 0);
  if (address < 0) return -address;
  try {
    const totalPages = Math.ceil(bytes / pageBytes);
    const vec = windowVector(Math.min(totalPages, MINCORE_WINDOW_PAGES));
    for (let first = 0; first < totalPages; first += MINCORE_WINDOW_PAGES) {
      const pages = Math.min(MINCORE_WINDOW_PAGES, totalPages - first);
      const errno = libc.mincore(address + first * pageBytes, pages * pageBytes, vec);
      if (errno !== 0) return errno;
      visit(first, vec, pages);
    }
    return 0;
  } finally {
    libc.munmap(address, bytes);
  }
}

let sharedVector = new Uint8Array(0);
function windowVector(pages: number): Uint8Array {
  if (sharedVector.length < pages) sharedVector = new Uint8Array(MINCORE_WINDOW_PAGES);
  return sharedVector;
}

/** Resident bytes of one open file of `bytes` bytes, or -errno. */
export function residentBytesOfFd(libc: LibcBindings, fd: number, bytes: number): number {
  const pageBytes = libc.pageSizeBytes;
  const lastPage = Math.ceil(bytes / pageBytes) - 1;
  let resident = 0;
  const errno = scanFilePages(libc, fd, bytes, (first, vec, pages) => {
    for (let i = 0; i < pages; i++) {
      if ((vec[i] & 1) === 0) continue;
      // The last page holds only the file's tail.
      resident += first + i === lastPage ? bytes - lastPage * pageBytes : pageBytes;
    }
  });
  return errno === 0 ? resident : -errno;
}

/** Measures how much of `files` is in the page cache (mincore; needs ownership or write access unless root). */
export async function residency(files: readonly FileRef[]): Promise<Residency> {
  const libc = requireLibc();
  const result: Residency = {
    residentBytes: 0,
    totalBytes: 0,
    fraction: 0,
    checkedFiles: 0,
    unknownFiles: 0,
    unknownBytes: 0,
  };
  const unknown = (reason: string, bytes = 0): void => {
    result.unknownFiles++;
    result.unknownBytes += bytes;
    result.unknownReason ??= reason;
  };
  for (let index = 0; index < files.length; index++) {
    if (index > 0 && index % FILES_PER_TURN === 0) await yieldToLoop();
    const { path } = files[index];
    let fd: number;
    try {
      fd = fs.openSync(path, 'r');
    } catch (error) {
      unknown(`${path}: ${errorCode(error)}`);
      continue;
    }
    try {
      const stat = fs.fstatSync(fd);
      if (!stat.isFile() || stat.size === 0) continue;
      if (!mincoreIsTrustworthy(path, stat)) {
        unknown(MESSAGES.mincoreUntrusted, stat.size);
        continue;
      }
      const resident = residentBytesOfFd(libc, fd, stat.size);
      if (resident < 0) {
        unknown(`${path}: mincore ${errnoName(-resident)}`, stat.size);
        continue;
      }
      result.residentBytes += resident;
      result.totalBytes += stat.size;
      result.checkedFiles++;
    } catch (error) {
      unknown(`${path}: ${errorCode(error)}`);
    } finally {
      fs.closeSync(fd);
    }
  }
  result.fraction = result.totalBytes > 0 ? result.residentBytes / result.totalBytes : 0;
  return result;
}

/**
 * Drops `files` from the page cache with posix_fadvise(DONTNEED), without root.
 * With `sync`, each file's dirty pages are written first (fdatasync works on a
 * read-only descriptor), since DONTNEED skips dirty pages.
 */
export async function evict(files: readonly FileRef[], options: { sync: boolean }): Promise<EvictResult> {
  const libc = requireLibc();
  const started = performance.now();
  const result: EvictResult = { files: 0, bytes: 0, failedFiles: 0, elapsedMs: 0 };
  for (let index = 0; index < files.length; index++) {
    if (index > 0 && index % FILES_PER_TURN === 0) await yieldToLoop();
    const { path } = files[index];
    try {
      result.bytes += evictPath(libc, path, options.sync);
      result.files++;
    } catch (error) {
      result.failedFiles++;
      result.firstError ??= `${path}: ${errorCode(error)}`;
    }
  }
  result.elapsedMs = performance.now() - started;
  return result;
}

/** Evicts one file; returns its size. Throws a Node-style error (with .code) on failure. */
export function evictPath(libc: LibcBindings, path: string, sync: boolean): number {
  const fd = fs.openSync(path, 'r');
  try {
    if (sync) fs.fdatasyncSync(fd);
    const size = fs.fstatSync(fd).size;
    adviseDontNeed(libc, fd, 0, 0);
    return size;
  } finally {
    fs.closeSync(fd);
  }
}

/** posix_fadvise(fd, offset, length, DONTNEED); length 0 means to the end of the file. */
export function adviseDontNeed(libc: LibcBindings, fd: number, offsetBytes: number, lengthBytes: number): void {
  const errno = libc.posixFadvise(fd, offsetBytes, lengthBytes, FADV.dontNeed);
  if (errno !== 0) throw Object.assign(new Error(`posix_fadvise: ${errnoName(errno)}`), { code: errnoName(errno) });
}

/**
 * Writes back all dirty data, then drops the page cache, dentries and inodes of
 * the whole machine (echo 3 > /proc/sys/vm/drop_caches; kernel
 * Documentation/admin-guide/sysctl/vm.rst). Needs root; a UserError otherwise.
 */
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
    throw new UserError(MESSAGES.dropCachesDenied(errorCode(error)), ExitCode.Environment);
  }
}

/**
 * Reads every file to the end with `concurrency` parallel readers, each reusing
 * one large buffer, so the files land in the page cache. Verify with residency():
 * a dataset larger than memory will not stay.
 */
export async function warm(
  files: readonly FileRef[],
  options: { concurrency?: number; bufferBytes?: number } = {},
): Promise<WarmResult> {
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? 8));
  const bufferBytes = Math.max(64 * 1024, Math.floor(options.bufferBytes ?? 4 * 1024 * 1024));
  const started = performance.now();
  const result: WarmResult = { files: 0, bytesRead: 0, failedFiles: 0, elapsedMs: 0 };
  let next = 0;
  const reader = async (): Promise<void> => {
    const buffer = Buffer.allocUnsafe(bufferBytes);
    while (next < files.length) {
      const { path } = files[next++];
      try {
        // Not `+= await`: that would read the total before the await and lose the other readers' bytes.
        const bytesRead = await readToEnd(path, buffer);
        result.bytesRead += bytesRead;
        result.files++;
      } catch (error) {
        result.failedFiles++;
        result.firstError ??= `${path}: ${errorCode(error)}`;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, files.length) }, reader));
  result.elapsedMs = performance.now() - started;
  return result;
}

async function readToEnd(path: string, buffer: Buffer): Promise<number> {
  const handle = await fs.promises.open(path, 'r');
  try {
    let total = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, total);
      if (bytesRead === 0) return total;
      total += bytesRead;
    }
  } finally {
    await handle.close();
  }
}

function requireLibc(): LibcBindings {
  const load = loadLibc();
  if (!load.ok) throw new UserError(MESSAGES.unsupported(load.reason), ExitCode.Environment);
  return load.libc;
}

function isPrivileged(): boolean {
  return typeof process.geteuid === 'function' && process.geteuid() === 0;
}

/**
 * Whether mincore shows this file's page-cache pages to us. Since Linux 5.2
 * (commit 134fca9063ad, "mm/mincore.c: make mincore() more conservative"),
 * mincore on a file mapping reports page-cache state only to root, the file's
 * owner or a process that may write it; anyone else sees only pages mapped in
 * its own page tables, i.e. a false "not resident".
 */
export function mincoreIsTrustworthy(path: string, stat: fs.Stats): boolean {
  if (isPrivileged()) return true;
  if (typeof process.geteuid === 'function' && stat.uid === process.geteuid()) return true;
  try {
    fs.accessSync(path, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** The symbolic name of an errno (ENOENT), or 'errno N'. */
export function errnoName(errno: number): string {
  for (const [name, value] of Object.entries(osConstants.errno)) if (value === errno) return name;
  return `errno ${errno}`;
}

/** The code of a Node system error (ENOENT), or its message. */
export function errorCode(error: unknown): string {
  if (error && typeof error === 'object' && 'code' in error && typeof error.code === 'string') return error.code;
  return error instanceof Error ? error.message : String(error);
}
