import fs from 'node:fs';
import path from 'node:path';
import { splitDev } from './block-device.js';
import { ENOSYS, S_IFDIR, S_IFREG, type FileSyscalls } from './file-syscalls.js';
import type { FakeLibc } from './fake-libc.js';

// errno numbers the fake answers with (Linux's).
const EBADF = 9;
const ENOTDIR = 20;
// O_DIRECTORY in open(2)'s flags.
const O_DIRECTORY = 0o200000;

/** What FakeFileSyscalls can pretend. */
export interface FakeFileSyscallsOptions {
  /** Whether cachestat(2) exists (default true); without it the page-cache code falls back to mincore. */
  cachestat?: boolean;
}

/**
 * The per-file calls (file-syscalls.ts) on real files through Node's fs, with
 * cachestat answered from a FakeLibc's page cache: together they let
 * residency, evict and warm run on a page cache a test sets, whatever the
 * kernel's own holds. syncfs only counts.
 */
export class FakeFileSyscalls implements FileSyscalls {
  /** syncfs(2) calls. */
  syncs = 0;
  /** readFirstByte calls. */
  firstByteReads = 0;
  /** Paths of the open descriptors, for openat. */
  private readonly paths = new Map<number, string>();

  constructor(
    /** The page cache cachestat reads. */
    private readonly libc: FakeLibc,
    private readonly options: FakeFileSyscallsOptions = {},
  ) {}

  open(file: string, flags: number): number {
    let fd: number;
    try {
      fd = fs.openSync(file, 'r');
    } catch (error) {
      return (error as NodeJS.ErrnoException).errno ?? -EBADF;
    }
    if ((flags & O_DIRECTORY) !== 0 && !fs.fstatSync(fd).isDirectory()) {
      fs.closeSync(fd);
      return -ENOTDIR;
    }
    this.paths.set(fd, file);
    return fd;
  }

  openat(dirFd: number, name: Uint8Array, flags: number): number {
    const dir = this.paths.get(dirFd);
    return dir === undefined ? -EBADF : this.open(path.join(dir, nameOf(name)), flags);
  }

  close(fd: number): number {
    this.paths.delete(fd);
    try {
      fs.closeSync(fd);
      return 0;
    } catch {
      return EBADF;
    }
  }

  statx(dirFd: number, name: Uint8Array): ReturnType<FileSyscalls['statx']> {
    const dir = this.paths.get(dirFd);
    if (dir === undefined) return -EBADF;
    try {
      const stat = fs.statSync(path.join(dir, nameOf(name)), { bigint: true });
      const { major, minor } = splitDev(stat.dev);
      return { type: stat.isFile() ? S_IFREG : stat.isDirectory() ? S_IFDIR : 0, bytes: Number(stat.size), uid: Number(stat.uid), key: `${major}:${minor}:${stat.ino}` };
    } catch (error) {
      return (error as NodeJS.ErrnoException).errno ?? -EBADF;
    }
  }

  /** Reads the real file's first byte: the fake's page cache is left as it is, as a read of a resident page leaves the kernel's. */
  readFirstByte(fd: number): number {
    this.firstByteReads++;
    try {
      return fs.readSync(fd, Buffer.alloc(1), 0, 1, 0);
    } catch (error) {
      return (error as NodeJS.ErrnoException).errno ?? -EBADF;
    }
  }

  cachedPages(fd: number, offsetBytes: number, lengthBytes: number): number {
    return this.options.cachestat === false ? -ENOSYS : this.libc.cachedPages(fd, offsetBytes, lengthBytes);
  }

  syncfs(): number {
    this.syncs++;
    return 0;
  }
}

/** A NUL-terminated name as a string. */
function nameOf(name: Uint8Array): string {
  const end = name.indexOf(0);
  return Buffer.from(name.subarray(0, end < 0 ? name.length : end)).toString('utf8');
}
