// The per-file system calls of set-up at ImageNet's file count (a microsecond per file is 1.3 s): a directory
// descriptor and a NUL-terminated name in, numbers out. statx 2.2 us a file against fs.statSync's 4.5; cachestat 4.2 us
// against mincore's 9.8.
import { bindLibcCalls } from './libc-calls.js';
import { O_RDONLY_CLOEXEC } from './libc.js';

/** open(2) flags: O_RDONLY | O_DIRECTORY | O_CLOEXEC. */
export const O_DIRECTORY_CLOEXEC = 0o200000 | O_RDONLY_CLOEXEC;
/** ENOSYS: the kernel lacks the call (cachestat before Linux 6.5). */
export const ENOSYS = 38;
/** EPERM: cachestat refuses files we may not write (the mincore rule, Linux >= 6.14). */
export const EPERM = 1;

/** What statx(2) told about one entry (symlinks followed). */
export interface StatxFacts {
  /** File type bits of st_mode (S_IFMT). */
  type: number;
  /** Size in bytes. */
  bytes: number;
  /** Owner's uid. */
  uid: number;
  /** 'major:minor:inode', to recognise a directory already visited. */
  key: string;
}

// The file-type bits of st_mode (S_IFMT in <sys/stat.h>).
const S_IFMT = 0o170000;
/** st_mode file type of a regular file. */
export const S_IFREG = 0o100000;
/** st_mode file type of a directory. */
export const S_IFDIR = 0o040000;

/** The calls; each returns a number (>= 0 or -errno, libc-calls.ts's convention) and never throws. */
export interface FileSyscalls {
  /** open(path, flags): a descriptor or -errno. */
  open(path: string, flags: number): number;
  /** openat(dirfd, name, flags), `name` NUL-terminated bytes: a descriptor or -errno. */
  openat(dirFd: number, name: Uint8Array, flags: number): number;
  /** close(fd): 0 or -errno. */
  close(fd: number): number;
  /** statx(dirfd, name) following symlinks: the facts, or -errno. */
  statx(dirFd: number, name: Uint8Array): StatxFacts | number;
  /** cachestat(2) over [offset, offset + length) (0: to the end): cached pages, or -errno (-ENOSYS before 6.5). */
  cachedPages(fd: number, offsetBytes: number, lengthBytes: number): number;
  /** syncfs(fd): write back the dirty data of fd's whole file system; 0 or -errno. */
  syncfs(fd: number): number;
  /** pread(fd, buf, 1, 0): the first byte read into a scratch buffer; 1, 0 at the end of the file, or -errno. */
  readFirstByte(fd: number): number;
}

/** The bindings, or why there are none. */
export type FileSyscallsLoad = { ok: true; calls: FileSyscalls } | { ok: false; reason: string };

let loaded: FileSyscallsLoad | undefined;

/** Loads the bindings on first call; never throws. */
export function loadFileSyscalls(): FileSyscallsLoad {
  loaded ??= tryLoad();
  return loaded;
}

// cachestat is 451 in the unified syscall table of every 64-bit architecture koffi ships for.
const SYS_CACHESTAT = 451;
const AT_STATX_SYNC_AS_STAT = 0;
// STATX_TYPE | STATX_MODE | STATX_UID | STATX_INO | STATX_SIZE
const STATX_MASK = 0x1 | 0x2 | 0x8 | 0x100 | 0x200;

function tryLoad(): FileSyscallsLoad {
  if (process.platform !== 'linux') return { ok: false, reason: `needs Linux (this is ${process.platform})` };
  if (process.arch !== 'x64' && process.arch !== 'arm64') return { ok: false, reason: `not bound on ${process.arch}` };
  const bound = bindLibcCalls();
  if (!bound.ok) return bound;
  const { calls: libc } = bound;
  const open = libc.checked('open');
  const openat = libc.checked('openat');
  const statx = libc.checked('statx');
  const pread = libc.checked('pread');
  const syscall = libc.checked('syscall');
  const scratch = new Uint8Array(1);
  // struct statx (include/uapi/linux/stat.h): fixed layout on every architecture.
  const statxBuffer = new Uint8Array(256);
  const statxView = new DataView(statxBuffer.buffer);
  // struct cachestat_range { __u64 off, len; } and struct cachestat { __u64 nr_cache, ... }.
  const range = new BigUint64Array(2);
  const rangeBytes = new Uint8Array(range.buffer);
  const cstat = new BigUint64Array(5);
  const cstatBytes = new Uint8Array(cstat.buffer);
  const calls: FileSyscalls = {
    open,
    openat,
    close: libc.checked('close'),
    statx: (dirFd, name) => {
      const result = statx(dirFd, name, AT_STATX_SYNC_AS_STAT, STATX_MASK, statxBuffer);
      if (result < 0) return result;
      const le = true;
      const mode = statxView.getUint16(28, le);
      return {
        type: mode & S_IFMT,
        bytes: Number(statxView.getBigUint64(40, le)),
        uid: statxView.getUint32(20, le),
        key: `${statxView.getUint32(136, le)}:${statxView.getUint32(140, le)}:${statxView.getBigUint64(32, le)}`,
      };
    },
    cachedPages: (fd, offsetBytes, lengthBytes) => {
      range[0] = BigInt(offsetBytes);
      range[1] = BigInt(lengthBytes);
      const result = syscall(SYS_CACHESTAT, fd, rangeBytes, cstatBytes, 0);
      return result < 0 ? result : Number(cstat[0]);
    },
    syncfs: libc.checked('syncfs'),
    readFirstByte: (fd) => pread(fd, scratch, 1, 0),
  };
  return { ok: true, calls };
}
