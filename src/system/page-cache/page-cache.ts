// Page-cache control for the cached and cold modes: measure a dataset's
// residency, evict it file by file, warm it, or drop every cache globally.
//
// Residency is cachestat(2) per file where the kernel has it (Linux 6.5: one
// call, no mapping; it refuses with EPERM where mincore would lie, since 6.14),
// else mmap(PROT_READ, MAP_SHARED) + mincore(2), the method of util-linux
// fincore. Eviction is posix_fadvise(POSIX_FADV_DONTNEED) after one syncfs(2)
// per file system, which drops a file's clean, unmapped pages without root
// (see Documentation/admin-guide/mm and man 2 posix_fadvise); pages that are
// dirty, under writeback, or mapped by another process stay. (An fdatasync per
// file, as before, made ext4 flush the disk's write cache once per file: 70 us
// a file, 1.5 min at 1.28M files.)
//
// A dataset's file list (a view of a FileTable) is walked directory by
// directory: one directory descriptor, then openat with each stored name.
// Each operation is one walk over the per-file calls, chosen once: the bound
// syscalls, or Node's fs where they are not bound (node-file-syscalls.ts: no
// cachestat, so residency is measured by mincore; no syncfs, so sync(2)).
import fs from 'node:fs';
import pathModule from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { ExitCode, UserError } from '../../errors.js';
import {
  FADV,
  MAP_SHARED,
  O_RDONLY_CLOEXEC,
  PROT_READ,
  loadLibc,
  type LibcBindings,
  type LibcLoad,
} from '../kernel/libc.js';
import {
  ENOSYS,
  EPERM,
  O_DIRECTORY_CLOEXEC,
  loadFileSyscalls,
  type FileSyscalls,
  type FileSyscallsLoad,
} from '../kernel/file-syscalls.js';
import { NodeFileSyscalls } from '../kernel/node-file-syscalls.js';
import { tableOf } from '../dataset/file-table.js';
import { errnoError, errnoName, errorCode } from '../kernel/errno.js';
import type { CpuAccount } from '../kernel/cpu-ledger.js';
import { PAGE_CACHE_TEXT } from './page-cache-text.js';

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
  /**
   * Bytes still resident once the eviction was done (each advised file checked
   * again): the residency a caller would otherwise measure in a second pass.
   * Absent when some file's residency could not be read.
   */
  residentBytesAfter?: number;
  /** The first failure, as 'path: CODE', if any. */
  firstError?: string;
  /** Wall time of the whole eviction. */
  elapsedMs: number;
}

/** The outcome of bringing files into the page cache. */
export interface WarmResult {
  /** Files brought in (read to the end, or read ahead by the kernel on advice). */
  files: number;
  /** Bytes of those files. */
  bytesRead: number;
  /** Files found wholly resident already, left alone. */
  residentFiles: number;
  /** Files read ahead on POSIX_FADV_WILLNEED advice instead of read here. */
  advisedFiles: number;
  /** Files that could not be read. */
  failedFiles: number;
  /** The first failure, as 'path: CODE', if any. */
  firstError?: string;
  /** Wall time of the whole warm-up. */
  elapsedMs: number;
  /**
   * The files' residency as the warm-up left it, each file looked at once it
   * was brought in (found resident, checked after its advice, or checked
   * again after its read): what residency() right after would say, without a
   * second pass over every file. Absent without the page-cache calls.
   */
  residency?: Residency;
}

/**
 * The calls residency, evict and warm make: this machine's, unless a test passes fakes (FakeLibc, FakeFileSyscalls).
 */
export interface PageCacheBindings {
  /** libc's page-cache calls (mincore, posix_fadvise), or why there are none. */
  libc: LibcLoad;
  /** The per-file calls (openat, cachestat, syncfs), or why there are none: Node's fs then opens the files. */
  calls: FileSyscallsLoad;
}

/** This machine's bindings, loaded once. */
function systemBindings(): PageCacheBindings {
  return { libc: loadLibc(), calls: loadFileSyscalls() };
}

/** The per-file calls an operation walks with: the bound ones, else Node's fs. */
function perFileCalls(load: FileSyscallsLoad): FileSyscalls {
  return load.ok ? load.calls : new NodeFileSyscalls();
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
  if (residencyOk && !isPrivileged()) reason = PAGE_CACHE_TEXT.mincoreUntrusted;
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
      const result = libc.mincore(address + first * pageBytes, pages * pageBytes, vec);
      if (result < 0) return -result;
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

/**
 * Measures how much of `files` is in the page cache (needs ownership or write
 * access unless root). `options.cpu`: the account its work is charged to (a
 * CPU ledger's 'warming' or 'eviction', for the state it checks).
 */
export async function residency(
  files: readonly FileRef[],
  bindings: PageCacheBindings = systemBindings(),
  options: { cpu?: CpuAccount } = {},
): Promise<Residency> {
  const libc = requireLibc(bindings.libc);
  const calls = perFileCalls(bindings.calls);
  const result = emptyResidency();
  const probe = new ResidencyProbe(libc, calls);
  await forEachOpenFile(
    files,
    calls,
    options.cpu,
    (cursor) => {
      const resident = probe.residentBytes(cursor);
      if (typeof resident === 'string') unknownFile(result, resident, cursor.bytes);
      else if (cursor.bytes > 0) {
        result.residentBytes += resident;
        result.totalBytes += cursor.bytes;
        result.checkedFiles++;
      }
    },
    (cursor, code) => unknownFile(result, `${cursor.path()}: ${code}`),
  );
  result.fraction = result.totalBytes > 0 ? result.residentBytes / result.totalBytes : 0;
  return result;
}

function emptyResidency(): Residency {
  return { residentBytes: 0, totalBytes: 0, fraction: 0, checkedFiles: 0, unknownFiles: 0, unknownBytes: 0 };
}

function unknownFile(result: Residency, reason: string, bytes = 0): void {
  result.unknownFiles++;
  result.unknownBytes += bytes;
  result.unknownReason ??= reason;
}

/** One open file of a walk; reused from file to file (no allocation per file). */
interface FileCursor {
  /** Index in the list. */
  index: number;
  /** The open descriptor. */
  fd: number;
  /** Size in bytes (from the walk's table, or fstat). */
  bytes: number;
  /** Whether mincore may not show this file's pages to us: 1 yes, 0 no, -1 unknown. */
  foreign: number;
  /** The file's path (built on demand). */
  path(): string;
}

/**
 * Opens each file in turn and calls `visit` with it open; `failed` when it
 * cannot be opened or sized. A FileTable view goes directory by directory
 * (openat on the directory's descriptor with the stored name); any other list
 * opens each path. Yields to the event loop every FILES_PER_TURN files; each
 * turn between yields is charged to `cpu` when one is given.
 */
async function forEachOpenFile(
  files: readonly FileRef[],
  calls: FileSyscalls,
  cpu: CpuAccount | undefined,
  visit: (cursor: FileCursor) => void,
  failed: (cursor: FileCursor, code: string) => void,
  selected: (index: number) => boolean = () => true,
): Promise<void> {
  const table = tableOf(files);
  let dir = 0;
  const cursor: FileCursor = {
    index: 0,
    fd: -1,
    bytes: 0,
    foreign: -1,
    path: () => (table ? table.path(cursor.index, dir) : files[cursor.index].path),
  };
  const run = (fd: number): void => {
    if (fd < 0) {
      failed(cursor, errnoName(-fd));
      return;
    }
    cursor.fd = fd;
    try {
      if (!table) {
        const stat = fs.fstatSync(fd);
        if (!stat.isFile()) return;
        cursor.bytes = stat.size;
        cursor.foreign = ownedOrPrivileged(stat.uid) ? 0 : 1;
      }
      visit(cursor);
    } catch (error) {
      failed(cursor, errorCode(error));
    } finally {
      calls.close(fd);
    }
  };
  let turn = 0;
  let stop = cpu?.start();
  const nextTurn = async (): Promise<void> => {
    stop?.();
    await yieldToLoop();
    stop = cpu?.start();
  };
  try {
    if (table) {
      for (dir = 0; dir < table.prefixes.length; dir++) {
        const dirFd = calls.open(table.prefixes[dir] || '.', O_DIRECTORY_CLOEXEC);
        try {
          for (let i = table.dirStart[dir]; i < table.dirStart[dir + 1]; i++) {
            if (!selected(i)) continue;
            if (++turn % FILES_PER_TURN === 0) await nextTurn();
            cursor.index = i;
            cursor.bytes = table.sizes[i];
            cursor.foreign = table.foreign[i];
            if (dirFd < 0) failed(cursor, errnoName(-dirFd));
            else run(calls.openat(dirFd, table.nameBytes(i), O_RDONLY_CLOEXEC));
          }
        } finally {
          if (dirFd >= 0) calls.close(dirFd);
        }
      }
      return;
    }
    for (let i = 0; i < files.length; i++) {
      if (!selected(i)) continue;
      if (++turn % FILES_PER_TURN === 0) await nextTurn();
      cursor.index = i;
      run(calls.open(files[i].path, O_RDONLY_CLOEXEC));
    }
  } finally {
    stop?.();
  }
}

// Files handled between yields: 3-6 us each on the bound calls, so ~5 ms a
// turn; about twice that through Node's fs and mincore.
const FILES_PER_TURN = 1024;

/** Resident bytes of an open file by cachestat, falling back to mincore for good on ENOSYS. */
class ResidencyProbe {
  private cachestat = true;

  constructor(
    private readonly libc: LibcBindings,
    private readonly calls: FileSyscalls,
  ) {}

  /** Resident bytes (the tail page counts its bytes only), or why unknown. */
  residentBytes(cursor: FileCursor): number | string {
    const bytes = cursor.bytes;
    if (bytes <= 0) return 0;
    const pageBytes = this.libc.pageSizeBytes;
    if (this.cachestat) {
      const pages = Math.ceil(bytes / pageBytes);
      const cached = this.calls.cachedPages(cursor.fd, 0, 0);
      if (cached === -ENOSYS) this.cachestat = false;
      else if (cached === -EPERM) return PAGE_CACHE_TEXT.mincoreUntrusted;
      else if (cached < 0) return `${cursor.path()}: cachestat ${errnoName(-cached)}`;
      else {
        if (cached === 0) return 0;
        if (cached >= pages) return bytes;
        const tailPage = (pages - 1) * pageBytes;
        const tail = this.calls.cachedPages(cursor.fd, tailPage, pageBytes);
        if (tail < 0) return `${cursor.path()}: cachestat ${errnoName(-tail)}`;
        return (cached - tail) * pageBytes + tail * (bytes - tailPage);
      }
    }
    if (cursor.foreign === 1 && !mayWrite(cursor.path())) return PAGE_CACHE_TEXT.mincoreUntrusted;
    const resident = residentBytesOfFd(this.libc, cursor.fd, bytes);
    return resident < 0 ? `${cursor.path()}: mincore ${errnoName(-resident)}` : resident;
  }
}

/**
 * Drops `files` from the page cache with posix_fadvise(DONTNEED), without root.
 * With `sync`, the dirty pages of each file system holding them are written
 * first (one syncfs(2) per file system, before its first file), since DONTNEED
 * skips dirty pages.
 */
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
  const fail = (cursor: FileCursor, code: string): void => {
    result.failedFiles++;
    result.firstError ??= `${cursor.path()}: ${code}`;
  };
  // A dataset larger than memory is mostly not cached: a file with no cached
  // page (one cachestat, ~1 us) needs no advice. DONTNEED on it is not free:
  // kernels before 6.6 follow a range they could not wholly drop with
  // lru_add_drain_all(), which interrupts every CPU (mm/fadvise.c).
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
      fail(cursor, code);
    },
  );
  if (residentAfter !== null) result.residentBytesAfter = residentAfter;
  result.elapsedMs = performance.now() - started;
  return result;
}

/**
 * syncfs(2) once on each file system holding the files' directories; sync(2), which writes back them all, where syncfs
 * fails.
 */
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
    throw new UserError(PAGE_CACHE_TEXT.dropCachesDenied(errorCode(error)), ExitCode.Environment);
  }
}

// Files up to this size are brought in by POSIX_FADV_WILLNEED, one call per
// READAHEAD_CHUNK_BYTES: the kernel caps one call's read-ahead at the larger of
// the device's largest request and the read-ahead window (mm/readahead.c,
// force_page_cache_ra), 128 KiB by default.
const WILLNEED_MAX_BYTES = 1024 * 1024;
const READAHEAD_CHUNK_BYTES = 128 * 1024;

/**
 * Brings `files` into the page cache, touching only what is not there yet:
 * each file's residency is checked first (a wholly resident file is not read
 * again, but see below); a small file gets POSIX_FADV_WILLNEED, so the kernel reads it ahead
 * with no copy and no thread hand-off (7.9 us a 1 KiB file here, against about
 * 80 us through fs.promises), and is checked again once all advice is given;
 * the rest, and any file the advice did not bring in, is read to the end by
 * `concurrency` parallel readers, each reusing one buffer, and checked once
 * read. The result holds the residency it saw (a dataset larger than memory
 * will not stay).
 *
 * Every file it leaves resident has its first byte read, so that the read's
 * access-time update happens now and not at the job's first read. On a
 * relatime mount (the default) a read updates atime when it is older than the
 * file's mtime or ctime, or a day old, and on ext4 writing it needs the inode's block
 * of the inode table, read from storage when not cached. Measured on 20,000
 * of 1.28M resident 1 KiB files whose inode blocks were not cached: a job
 * read 297% of the bytes it consumed from storage, 0% after this read (and
 * 0% with O_NOATIME), so a cached mode went unproven on metadata, not data.
 */
export async function warm(
  files: readonly FileRef[],
  options: {
    concurrency?: number;
    bufferBytes?: number;
    /** Read each resident file's first byte (default true; see above). A warm that follows one that did can skip it. */
    touchAccessTimes?: boolean;
    /**
     * Charged with the CPU of the residency passes (a CPU ledger's 'warming'); the parallel reads run in Node's
     * threads, not charged.
     */
    cpu?: CpuAccount;
  } = {},
  bindings: PageCacheBindings = systemBindings(),
): Promise<WarmResult> {
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? 8));
  const bufferBytes = Math.max(64 * 1024, Math.floor(options.bufferBytes ?? 4 * 1024 * 1024));
  const started = performance.now();
  const result: WarmResult = {
    files: 0,
    bytesRead: 0,
    residentFiles: 0,
    advisedFiles: 0,
    failedFiles: 0,
    elapsedMs: 0,
  };
  const fail = (path: string, code: string): void => {
    result.failedFiles++;
    result.firstError ??= `${path}: ${code}`;
  };
  // Per file: 0 nothing to do, ADVISED read ahead on advice, READ to be read here.
  const ADVISED = 1;
  const READ = 2;
  const marks = new Uint8Array(files.length);
  let next = 0;
  const reader = async (): Promise<void> => {
    const buffer = READ_BUFFERS.take(bufferBytes);
    try {
      await readMarked(buffer);
    } finally {
      READ_BUFFERS.give(buffer);
    }
  };
  const readMarked = async (buffer: Buffer): Promise<void> => {
    for (;;) {
      while (next < files.length && marks[next] !== READ) next++;
      if (next >= files.length) return;
      const { path } = files[next++];
      try {
        // Not `+= await`: that would read the total before the await and lose the other readers' bytes.
        const bytesRead = await readToEnd(path, buffer);
        result.bytesRead += bytesRead;
        result.files++;
      } catch (error) {
        fail(path, errorCode(error));
      }
    }
  };
  const readMarkedFiles = async (): Promise<void> => {
    await Promise.all(Array.from({ length: Math.min(concurrency, files.length) }, reader));
  };
  const libcLoad = bindings.libc;
  if (libcLoad.ok) {
    const libc = libcLoad.libc;
    const calls = perFileCalls(bindings.calls);
    const probe = new ResidencyProbe(libc, calls);
    const advise = (fd: number, bytes: number): boolean => {
      for (let offset = 0; offset < bytes; offset += READAHEAD_CHUNK_BYTES) {
        if (libc.posixFadvise(fd, offset, Math.min(READAHEAD_CHUNK_BYTES, bytes - offset), FADV.willNeed) !== 0)
          return false;
      }
      return true;
    };
    const touch = options.touchAccessTimes !== false;
    const seen = emptyResidency();
    const count = (cursor: FileCursor, resident: number): void => {
      if (cursor.bytes === 0) return;
      seen.residentBytes += resident;
      seen.totalBytes += cursor.bytes;
      seen.checkedFiles++;
    };
    await forEachOpenFile(
      files,
      calls,
      options.cpu,
      (cursor) => {
        const resident = probe.residentBytes(cursor);
        if (typeof resident === 'number' && resident >= cursor.bytes) {
          result.residentFiles++;
          count(cursor, resident);
          if (touch) calls.readFirstByte(cursor.fd);
        } else
          marks[cursor.index] = cursor.bytes <= WILLNEED_MAX_BYTES && advise(cursor.fd, cursor.bytes) ? ADVISED : READ;
      },
      (cursor, code) => {
        fail(cursor.path(), code);
        unknownFile(seen, `${cursor.path()}: ${code}`);
      },
    );
    // The advice was given to every file before this pass, so most reads have landed.
    await forEachOpenFile(
      files,
      calls,
      options.cpu,
      (cursor) => {
        const resident = probe.residentBytes(cursor);
        if (typeof resident === 'number' && resident >= cursor.bytes) {
          result.files++;
          result.advisedFiles++;
          result.bytesRead += cursor.bytes;
          count(cursor, resident);
          if (touch) calls.readFirstByte(cursor.fd);
        } else marks[cursor.index] = READ;
      },
      (cursor, code) => {
        fail(cursor.path(), code);
        unknownFile(seen, `${cursor.path()}: ${code}`);
      },
      (index) => marks[index] === ADVISED,
    );
    await readMarkedFiles();
    // What was read here is looked at once read: only those files get a second look.
    await forEachOpenFile(
      files,
      calls,
      options.cpu,
      (cursor) => {
        const resident = probe.residentBytes(cursor);
        if (typeof resident === 'string') unknownFile(seen, resident, cursor.bytes);
        else count(cursor, resident);
      },
      (cursor, code) => unknownFile(seen, `${cursor.path()}: ${code}`),
      (index) => marks[index] === READ,
    );
    seen.fraction = seen.totalBytes > 0 ? seen.residentBytes / seen.totalBytes : 0;
    result.residency = seen;
  } else {
    marks.fill(READ);
    await readMarkedFiles();
  }

  result.elapsedMs = performance.now() - started;
  return result;
}

/**
 * The warm readers' buffers, kept from one warm to the next. Allocated anew,
 * 8 of 4 MiB a warm are memory outside V8's heap that it answers with a full
 * collection: 8 to 15 ms of the profiler's CPU, landing in the block after the
 * warm (in a cached block of a few seconds, a third of its profiler CPU here).
 */
const READ_BUFFERS = {
  spare: [] as Buffer[],
  take(bytes: number): Buffer {
    const at = this.spare.findIndex((b) => b.length === bytes);
    return at >= 0 ? this.spare.splice(at, 1)[0] : Buffer.allocUnsafe(bytes);
  },
  give(buffer: Buffer): void {
    if (this.spare.length < MAX_SPARE_BUFFERS) this.spare.push(buffer);
  },
};
const MAX_SPARE_BUFFERS = 8;

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

function requireLibc(load: LibcLoad): LibcBindings {
  if (!load.ok) throw new UserError(PAGE_CACHE_TEXT.unsupported(load.reason), ExitCode.Environment);
  return load.libc;
}

/**
 * Whether mincore shows the pages of a file owned by `uid` to us without asking for write access: root, or the owner.
 */
function ownedOrPrivileged(uid: number): boolean {
  return isPrivileged() || (typeof process.geteuid === 'function' && uid === process.geteuid());
}

/** Whether this process may write `path` (which also lets mincore show its pages). */
function mayWrite(path: string): boolean {
  try {
    fs.accessSync(path, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
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
  return ownedOrPrivileged(stat.uid) || mayWrite(path);
}
