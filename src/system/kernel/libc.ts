// Thin bindings to the few libc calls that control and observe the page cache.
//
// koffi is required lazily (createRequire, on first use) so that importing this
// module never fails: on a machine where koffi's prebuilt binary or libc.so.6
// is missing (macOS, musl, an odd architecture), loadLibc() answers
// { ok: false, reason } and callers degrade.
//
// Addresses are declared as intptr_t so that they come back as plain numbers
// (user-space addresses are below 2^47, well within Number's exact range) and
// MAP_FAILED comes back as -1; that keeps pointer arithmetic for mincore
// windows trivial.
import { createRequire } from 'node:module';

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

/**
 * inotify(7) flags and event bits from <sys/inotify.h> and <bits/inotify.h>
 * (IN_NONBLOCK and IN_CLOEXEC are O_NONBLOCK and O_CLOEXEC: these values hold
 * on x86, arm and the other architectures with the generic fcntl numbers).
 */
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
  /** A file was opened. */
  open: 0x20,
  /** The event queue overflowed; events were lost (wd is -1). */
  queueOverflow: 0x4000,
  /** The watch was removed (directory deleted, file system unmounted). */
  ignored: 0x8000,
  /** inotify_add_watch flag: fail unless the path is a directory. */
  onlyDir: 0x01000000,
  /** The subject of the event is a directory. */
  isDir: 0x40000000,
} as const;

/**
 * fanotify(7) flags and event bits from <sys/fanotify.h>, the same on every
 * architecture.
 */
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
  /**
   * fanotify_init's event_f_flags: O_RDONLY | O_CLOEXEC. Not O_LARGEFILE: its
   * number differs by architecture (arm64's 0o100000 is O_NOFOLLOW, which
   * fanotify_init refuses), and a 64-bit kernel adds it by itself.
   */
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

/** The libc calls the page-cache code needs; every call returns 0 or an errno, never throws. */
export interface LibcBindings {
  /** The system page size in bytes (getpagesize). */
  pageSizeBytes: number;
  /** posix_fadvise(fd, offset, len, advice); returns 0 or the error number (it does not use errno). */
  posixFadvise(fd: number, offsetBytes: number, lengthBytes: number, advice: number): number;
  /** mmap(NULL, length, prot, flags, fd, offset); returns the address, or -errno on failure. */
  mmap(lengthBytes: number, prot: number, flags: number, fd: number, offsetBytes: number): number;
  /** munmap(addr, length); returns 0 or errno. */
  munmap(address: number, lengthBytes: number): number;
  /** mincore(addr, length, vec): one byte per page, low bit = resident; returns 0 or errno. */
  mincore(address: number, lengthBytes: number, vec: Uint8Array): number;
  /** sync(2): schedule writeback of all dirty pages of all file systems. */
  sync(): void;
  /** inotify_init1(flags); returns the descriptor, or -errno. */
  inotifyInit1(flags: number): number;
  /** inotify_add_watch(fd, path, mask); returns the watch descriptor, or -errno. */
  inotifyAddWatch(fd: number, path: string, mask: number): number;
  /** fanotify_init(flags, event_f_flags); returns the descriptor, or -errno (EPERM without CAP_SYS_ADMIN). */
  fanotifyInit(flags: number, eventFileFlags: number): number;
  /** fanotify_mark(fd, flags, mask, dirfd, path); returns 0 or errno. */
  fanotifyMark(fd: number, flags: number, mask: number, dirFd: number, path: string): number;
  /** read(fd, buf, buf.length); returns the bytes read, or -errno (-EAGAIN on an empty nonblocking descriptor). */
  read(fd: number, buffer: Uint8Array): number;
  /** open(path, flags); returns the descriptor, or -errno. */
  open(path: string, flags: number): number;
  /** close(fd); returns 0 or errno. */
  close(fd: number): number;
  /**
   * close_range(first, last, 0) (Linux 5.9, glibc 2.34): closes every
   * descriptor from first to last in one call; returns 0 or errno (ENOSYS
   * where the kernel or libc lacks it: close them one by one then).
   */
  closeRange(first: number, last: number): number;
  /**
   * CPU seconds the calling thread has used (clock_gettime(CLOCK_THREAD_CPUTIME_ID)),
   * or -1 where that clock cannot be read. Unlike wall time around a piece of
   * work, it does not count time the thread was preempted on a busy machine.
   */
  threadCpuSec(): number;
}

const CLOCK_THREAD_CPUTIME_ID = 3;
// errno of a call the kernel or libc does not have.
const ENOSYS = 38;

/** The outcome of loading libc once: the bindings, or why they are unavailable. */
export type LibcLoad = { ok: true; libc: LibcBindings } | { ok: false; reason: string };

let loaded: LibcLoad | undefined;

/** Loads koffi and libc.so.6 on first call and memoizes the result; never throws. */
export function loadLibc(): LibcLoad {
  loaded ??= tryLoad();
  return loaded;
}

/** koffi and the libc.so.6 it opened, or why either is missing. */
export type LibcLibrary = { ok: true; koffi: typeof import('koffi'); lib: ReturnType<typeof import('koffi').load> } | { ok: false; reason: string };

let library: LibcLibrary | undefined;

/** koffi and libc.so.6, opened once for every module that binds calls in it (this one, file-syscalls.ts); never throws. */
export function loadLibcLibrary(): LibcLibrary {
  library ??= openLibrary();
  return library;
}

function openLibrary(): LibcLibrary {
  let koffi: typeof import('koffi');
  try {
    koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi');
  } catch (error) {
    return { ok: false, reason: `cannot load koffi (${firstLine(error)})` };
  }
  try {
    return { ok: true, koffi, lib: koffi.load('libc.so.6') };
  } catch (error) {
    return { ok: false, reason: `cannot bind libc.so.6 (${firstLine(error)})` };
  }
}

function tryLoad(): LibcLoad {
  if (process.platform !== 'linux') {
    return { ok: false, reason: `page-cache control needs Linux (this is ${process.platform})` };
  }
  const opened = loadLibcLibrary();
  if (!opened.ok) return opened;
  const { koffi, lib } = opened;
  try {
    const getpagesize = lib.func('int getpagesize(void)');
    const fadvise = lib.func('int posix_fadvise(int fd, int64_t offset, int64_t len, int advice)');
    const mmap = lib.func(
      'intptr_t mmap(void *addr, size_t length, int prot, int flags, int fd, int64_t offset)',
    );
    const munmap = lib.func('int munmap(intptr_t addr, size_t length)');
    const mincore = lib.func('int mincore(intptr_t addr, size_t length, _Out_ uint8_t *vec)');
    const sync = lib.func('void sync(void)');
    const inotifyInit1 = lib.func('int inotify_init1(int flags)');
    const inotifyAddWatch = lib.func('int inotify_add_watch(int fd, const char *path, uint32_t mask)');
    const fanotifyInit = lib.func('int fanotify_init(unsigned int flags, unsigned int event_f_flags)');
    const fanotifyMark = lib.func('int fanotify_mark(int fd, unsigned int flags, uint64_t mask, int dirfd, const char *path)');
    const read = lib.func('intptr_t read(int fd, _Out_ uint8_t *buf, size_t count)');
    const open = lib.func('int open(const char *path, int flags)');
    const close = lib.func('int close(int fd)');
    // Optional: a libc older than 2.34 lacks it, and every other binding still works.
    let closeRangeFunc: ((first: number, last: number, flags: number) => unknown) | null = null;
    try {
      closeRangeFunc = lib.func('int close_range(unsigned int first, unsigned int last, int flags)');
    } catch {
      closeRangeFunc = null;
    }
    // struct timespec is two 64-bit words on the 64-bit ABIs koffi's prebuilt binaries cover.
    const clockGettime = lib.func('int clock_gettime(int clock, _Out_ int64_t *ts)');
    const timespec = new BigInt64Array(2);
    const errno = (): number => koffi.errno();
    const pageSizeBytes = Number(getpagesize());
    if (!(pageSizeBytes > 0)) return { ok: false, reason: 'getpagesize() returned no page size' };
    const libc: LibcBindings = {
      pageSizeBytes,
      posixFadvise: (fd, offsetBytes, lengthBytes, advice) =>
        Number(fadvise(fd, offsetBytes, lengthBytes, advice)),
      mmap: (lengthBytes, prot, flags, fd, offsetBytes) => {
        const address = Number(mmap(null, lengthBytes, prot, flags, fd, offsetBytes));
        return address === -1 ? -errno() : address;
      },
      munmap: (address, lengthBytes) => (Number(munmap(address, lengthBytes)) === 0 ? 0 : errno()),
      mincore: (address, lengthBytes, vec) =>
        Number(mincore(address, lengthBytes, vec)) === 0 ? 0 : errno(),
      sync: () => {
        sync();
      },
      inotifyInit1: (flags) => {
        const fd = Number(inotifyInit1(flags));
        return fd < 0 ? -errno() : fd;
      },
      inotifyAddWatch: (fd, path, mask) => {
        const wd = Number(inotifyAddWatch(fd, path, mask));
        return wd < 0 ? -errno() : wd;
      },
      fanotifyInit: (flags, eventFileFlags) => {
        const fd = Number(fanotifyInit(flags, eventFileFlags));
        return fd < 0 ? -errno() : fd;
      },
      fanotifyMark: (fd, flags, mask, dirFd, path) => (Number(fanotifyMark(fd, flags, mask, dirFd, path)) === 0 ? 0 : errno()),
      read: (fd, buffer) => {
        const bytes = Number(read(fd, buffer, buffer.length));
        return bytes < 0 ? -errno() : bytes;
      },
      open: (path, flags) => {
        const fd = Number(open(path, flags));
        return fd < 0 ? -errno() : fd;
      },
      close: (fd) => (Number(close(fd)) === 0 ? 0 : errno()),
      closeRange: (first, last) => (closeRangeFunc === null ? ENOSYS : Number(closeRangeFunc(first, last, 0)) === 0 ? 0 : errno()),
      threadCpuSec: () =>
        Number(clockGettime(CLOCK_THREAD_CPUTIME_ID, timespec)) === 0
          ? Number(timespec[0]) + Number(timespec[1]) / 1e9
          : -1,
    };
    return { ok: true, libc };
  } catch (error) {
    return { ok: false, reason: `cannot bind libc.so.6 (${firstLine(error)})` };
  }
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0];
}
