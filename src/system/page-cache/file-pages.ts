// One file at a time: the walk that opens each file of a list (directory by directory for a FileTable view), and the
// residency of one open file.
import fs from 'node:fs';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { MAP_SHARED, O_RDONLY_CLOEXEC, PROT_READ, loadLibc, type LibcBindings, type LibcLoad } from '../kernel/libc.js';
import {
  ENOSYS,
  EPERM,
  O_DIRECTORY_CLOEXEC,
  loadFileSyscalls,
  type FileSyscalls,
  type FileSyscallsLoad,
} from '../kernel/file-syscalls.js';
import { NodeFileSyscalls } from '../kernel/node-file-syscalls.js';
import { canWrite } from '../kernel/read-text.js';
import { tableOf } from '../dataset/file-table.js';
import { errnoName, errorCode } from '../kernel/errno.js';
import type { CpuAccount } from '../kernel/cpu-ledger.js';
import type { FileRef, Residency } from './page-cache.js';
import { PAGE_CACHE_TEXT } from './page-cache-text.js';

/** The calls residency, evict and warm make: this machine's, or a test's fakes. */
export interface PageCacheBindings {
  /** libc's page-cache calls (mincore, posix_fadvise), or why there are none. */
  libc: LibcLoad;
  /** The per-file calls (openat, cachestat, syncfs), or why there are none: Node's fs then opens the files. */
  calls: FileSyscallsLoad;
}

/** This machine's bindings, loaded once. */
export function systemBindings(): PageCacheBindings {
  return { libc: loadLibc(), calls: loadFileSyscalls() };
}

/** The per-file calls an operation walks with: the bound ones, else Node's fs. */
export function perFileCalls(load: FileSyscallsLoad): FileSyscalls {
  return load.ok ? load.calls : new NodeFileSyscalls();
}
// Pages per mincore call, so a vector stays 64 KiB whatever the file size.
const MINCORE_WINDOW_PAGES = 64 * 1024;

/** Calls `visit(firstPage, vec, pages)` for each mincore window of the first `bytes` of `fd`; returns 0 or an errno. */
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

export function emptyResidency(): Residency {
  return { residentBytes: 0, totalBytes: 0, fraction: 0, checkedFiles: 0, unknownFiles: 0, unknownBytes: 0 };
}

/** Counts a file checked: `resident` of its `bytes` in the cache (an empty file is not counted). */
export function countResident(result: Residency, bytes: number, resident: number): void {
  if (bytes <= 0) return;
  result.residentBytes += resident;
  result.totalBytes += bytes;
  result.checkedFiles++;
}

/** Adds the residency of the files `selected` picks to `result`, and sets its fraction. */
export async function measureResidency(
  files: readonly FileRef[],
  calls: FileSyscalls,
  probe: ResidencyProbe,
  cpu: CpuAccount | undefined,
  result: Residency,
  selected?: (index: number) => boolean,
): Promise<Residency> {
  await forEachOpenFile(
    files,
    calls,
    cpu,
    (cursor) => {
      const resident = probe.residentBytes(cursor);
      if (typeof resident === 'string') unknownFile(result, resident, cursor.bytes);
      else countResident(result, cursor.bytes, resident);
    },
    (cursor, code) => unknownFile(result, `${cursor.path()}: ${code}`),
    selected,
  );
  result.fraction = result.totalBytes > 0 ? result.residentBytes / result.totalBytes : 0;
  return result;
}

export function unknownFile(result: Residency, reason: string, bytes = 0): void {
  result.unknownFiles++;
  result.unknownBytes += bytes;
  result.unknownReason ??= reason;
}

/** One open file of a walk; reused from file to file (no allocation per file). */
export interface FileCursor {
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

/** Calls `visit` with each file open (`failed` where it cannot), yielding every FILES_PER_TURN, charging `cpu`. */
export async function forEachOpenFile(
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

// Files handled between yields: 3-6 us each on the bound calls (~5 ms a turn), about twice that through Node's fs.
const FILES_PER_TURN = 1024;

/** Resident bytes of an open file by cachestat, falling back to mincore for good on ENOSYS. */
export class ResidencyProbe {
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
    if (cursor.foreign === 1 && !canWrite(cursor.path())) return PAGE_CACHE_TEXT.mincoreUntrusted;
    const resident = residentBytesOfFd(this.libc, cursor.fd, bytes);
    return resident < 0 ? `${cursor.path()}: mincore ${errnoName(-resident)}` : resident;
  }
}

/** Whether mincore shows the pages of a file owned by `uid` to us without write access: root, or the owner. */
function ownedOrPrivileged(uid: number): boolean {
  return isPrivileged() || (typeof process.geteuid === 'function' && uid === process.geteuid());
}

export function isPrivileged(): boolean {
  return typeof process.geteuid === 'function' && process.geteuid() === 0;
}

/** Whether mincore shows this file's pages to us (since Linux 5.2: root, the owner or a writer only). */
export function mincoreIsTrustworthy(path: string, stat: fs.Stats): boolean {
  return ownedOrPrivileged(stat.uid) || canWrite(path);
}
