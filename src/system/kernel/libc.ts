// The libc calls that control and observe the page cache and watch the data's files, as one interface fakes stand in
// for; each answers >= 0 or -errno, never throws.
import { bindLibcCalls } from './libc-calls.js';

/** PROT_READ from <sys/mman.h>. */
export const PROT_READ = 1;
/** MAP_SHARED from <sys/mman.h>: the mapping shows the file's page-cache pages. */
export const MAP_SHARED = 1;

/** posix_fadvise advice values (Linux; s390x 64-bit numbers DONTNEED and NOREUSE differently). */
export const FADV = {
  /** POSIX_FADV_SEQUENTIAL. */
  sequential: 2,
  /** POSIX_FADV_WILLNEED: start read-ahead of the range. */
  willNeed: 3,
  /** POSIX_FADV_DONTNEED: drop the range's clean pages from the page cache. */
  dontNeed: process.arch === 's390x' ? 6 : 4,
} as const;

/** inotify(7) flags and event bits (IN_NONBLOCK, IN_CLOEXEC: the generic fcntl numbers of x86 and arm). */
export const IN = {
  /** inotify_init1 flag: read() answers EAGAIN instead of blocking. */
  nonblock: 0o4000,
  /** inotify_init1 flag: the descriptor is not inherited across exec (the job must not get it). */
  cloexec: 0o2000000,
  /** A file was read. */
  access: 0x1,
  /** A file opened for writing was closed. */
  closeWrite: 0x8,
  /** A file not opened for writing was closed. */
  closeNowrite: 0x10,
  /** The event queue overflowed; events were lost (wd is -1). */
  queueOverflow: 0x4000,
  /** The watch was removed (directory deleted, file system unmounted). */
  ignored: 0x8000,
  /** inotify_add_watch flag: fail unless the path is a directory. */
  onlyDir: 0x01000000,
  /** The subject of the event is a directory. */
  isDir: 0x40000000,
} as const;

/** fanotify(7) flags and event bits, the same on every architecture. */
export const FAN = {
  /** fanotify_init: notification only (no permission decisions). */
  classNotif: 0x0,
  /** fanotify_init: the group's descriptor is not inherited across exec. */
  cloexec: 0x1,
  /** fanotify_init: read() answers EAGAIN instead of blocking. */
  nonblock: 0x2,
  /** fanotify_init: no limit on queued events (needs CAP_SYS_ADMIN, as fanotify with descriptors does anyway). */
  unlimitedQueue: 0x10,
  /** fanotify_init: no limit on marks. */
  unlimitedMarks: 0x20,
  /** event_f_flags: O_RDONLY | O_CLOEXEC; not O_LARGEFILE (arm64's number is O_NOFOLLOW; a 64-bit kernel adds it). */
  eventFileFlags: 0o2000000,
  /** fanotify_mark: add to the mark. */
  markAdd: 0x1,
  /** fanotify_mark: fail unless the path is a directory. */
  markOnlyDir: 0x8,
  /** A file was read. */
  access: 0x1,
  /** A file not opened for writing was closed. */
  closeNowrite: 0x10,
  /** The event queue overflowed (no descriptor). */
  queueOverflow: 0x4000,
  /** Mark mask: events on the directory's children too. */
  eventOnChild: 0x08000000,
  /** The subject of the event is a directory. */
  onDir: 0x40000000,
} as const;

/** AT_FDCWD: a path argument relative to the working directory. */
export const AT_FDCWD = -100;

/** open(2) flags: O_RDONLY | O_CLOEXEC (the job must not inherit the keeper's descriptors). */
export const O_RDONLY_CLOEXEC = 0o2000000;

/** EAGAIN on Linux: a nonblocking read found nothing to read. */
export const EAGAIN = 11;

/** The libc calls the page-cache code needs; every call returns a result >= 0 or -errno, never throws. */
export interface LibcBindings {
  /** The system page size in bytes (getpagesize). */
  pageSizeBytes: number;
  /** posix_fadvise(fd, offset, len, advice); returns 0 or -errno (the call itself answers the error number). */
  posixFadvise(fd: number, offsetBytes: number, lengthBytes: number, advice: number): number;
  /** mmap(NULL, length, prot, flags, fd, offset); returns the address, or -errno on failure. */
  mmap(lengthBytes: number, prot: number, flags: number, fd: number, offsetBytes: number): number;
  /** munmap(addr, length); returns 0 or -errno. */
  munmap(address: number, lengthBytes: number): number;
  /** mincore(addr, length, vec): one byte per page, low bit = resident; returns 0 or -errno. */
  mincore(address: number, lengthBytes: number, vec: Uint8Array): number;
  /** sync(2): schedule writeback of all dirty pages of all file systems. */
  sync(): void;
  /** inotify_init1(flags); returns the descriptor, or -errno. */
  inotifyInit1(flags: number): number;
  /** inotify_add_watch(fd, path, mask); returns the watch descriptor, or -errno. */
  inotifyAddWatch(fd: number, path: string, mask: number): number;
  /** fanotify_init(flags, event_f_flags); returns the descriptor, or -errno (EPERM without CAP_SYS_ADMIN). */
  fanotifyInit(flags: number, eventFileFlags: number): number;
  /** fanotify_mark(fd, flags, mask, dirfd, path); returns 0 or -errno. */
  fanotifyMark(fd: number, flags: number, mask: number, dirFd: number, path: string): number;
  /** read(fd, buf, buf.length); returns the bytes read, or -errno (-EAGAIN on an empty nonblocking descriptor). */
  read(fd: number, buffer: Uint8Array): number;
  /** open(path, flags); returns the descriptor, or -errno. */
  open(path: string, flags: number): number;
  /** close(fd); returns 0 or -errno. */
  close(fd: number): number;
  /** close_range(first, last, 0) (Linux 5.9, glibc 2.34); returns 0 or -errno (-ENOSYS where it is missing). */
  closeRange(first: number, last: number): number;
  /** CPU seconds of the calling thread (CLOCK_THREAD_CPUTIME_ID: preemption not counted), or -1 where unreadable. */
  threadCpuSec(): number;
}

const CLOCK_THREAD_CPUTIME_ID = 3;
// errno of a call the kernel or libc does not have.
const ENOSYS = 38;

/** The outcome of loading libc once: the bindings, or why they are unavailable. */
export type LibcLoad = { ok: true; libc: LibcBindings } | { ok: false; reason: string };

let loaded: LibcLoad | undefined;

/** Binds the calls on first call and memoizes the result; never throws. */
export function loadLibc(): LibcLoad {
  loaded ??= tryLoad();
  return loaded;
}

function tryLoad(): LibcLoad {
  if (process.platform !== 'linux') {
    return { ok: false, reason: `page-cache control needs Linux (this is ${process.platform})` };
  }
  const bound = bindLibcCalls();
  if (!bound.ok) return bound;
  const { calls } = bound;
  const pageSizeBytes = Number(calls.raw('getpagesize')());
  if (!(pageSizeBytes > 0)) return { ok: false, reason: 'getpagesize() returned no page size' };
  const fadvise = calls.raw('posix_fadvise');
  const mmap = calls.checked('mmap');
  const read = calls.checked('read');
  const sync = calls.raw('sync');
  const closeRange = calls.has('close_range') ? calls.checked('close_range') : null;
  const clockGettime = calls.raw('clock_gettime');
  const timespec = new BigInt64Array(2);
  const libc: LibcBindings = {
    pageSizeBytes,
    posixFadvise: (fd, offsetBytes, lengthBytes, advice) => {
      const error = Number(fadvise(fd, offsetBytes, lengthBytes, advice));
      return error === 0 ? 0 : -error;
    },
    mmap: (lengthBytes, prot, flags, fd, offsetBytes) => mmap(null, lengthBytes, prot, flags, fd, offsetBytes),
    munmap: calls.checked('munmap'),
    mincore: calls.checked('mincore'),
    sync: () => {
      sync();
    },
    inotifyInit1: calls.checked('inotify_init1'),
    inotifyAddWatch: calls.checked('inotify_add_watch'),
    fanotifyInit: calls.checked('fanotify_init'),
    fanotifyMark: calls.checked('fanotify_mark'),
    read: (fd, buffer) => read(fd, buffer, buffer.length),
    open: calls.checked('open'),
    close: calls.checked('close'),
    closeRange: (first, last) => (closeRange === null ? -ENOSYS : closeRange(first, last, 0)),
    threadCpuSec: () =>
      Number(clockGettime(CLOCK_THREAD_CPUTIME_ID, timespec)) === 0
        ? Number(timespec[0]) + Number(timespec[1]) / 1e9
        : -1,
  };
  return { ok: true, libc };
}
