// The per-file calls through Node's fs, where koffi's bindings are not loaded: no cachestat (residency by mincore) and
// no syncfs (eviction syncs with sync(2)).
import fs from 'node:fs';
import path from 'node:path';
import { splitDev } from './block-device.js';
import { ENOSYS, S_IFDIR, S_IFREG, type FileSyscalls } from './file-syscalls.js';

// errno numbers answered where Node's error carries none (Linux's).
const EBADF = 9;
const ENOTDIR = 20;
// O_DIRECTORY in open(2)'s flags.
const O_DIRECTORY = 0o200000;

/** FileSyscalls on Node's fs: real descriptors, no cachestat, no syncfs. */
export class NodeFileSyscalls implements FileSyscalls {
  /** Paths of the open descriptors, for openat. */
  private readonly paths = new Map<number, string>();
  private readonly scratch = Buffer.alloc(1);

  open(file: string, flags: number): number {
    let fd: number;
    try {
      fd = fs.openSync(file, 'r');
    } catch (error) {
      return negativeErrno(error);
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
      return -EBADF;
    }
  }

  statx(dirFd: number, name: Uint8Array): ReturnType<FileSyscalls['statx']> {
    const dir = this.paths.get(dirFd);
    if (dir === undefined) return -EBADF;
    try {
      const stat = fs.statSync(path.join(dir, nameOf(name)), { bigint: true });
      const { major, minor } = splitDev(stat.dev);
      return {
        type: stat.isFile() ? S_IFREG : stat.isDirectory() ? S_IFDIR : 0,
        bytes: Number(stat.size),
        uid: Number(stat.uid),
        key: `${major}:${minor}:${stat.ino}`,
      };
    } catch (error) {
      return negativeErrno(error);
    }
  }

  readFirstByte(fd: number): number {
    try {
      return fs.readSync(fd, this.scratch, 0, 1, 0);
    } catch (error) {
      return negativeErrno(error);
    }
  }

  cachedPages(_fd: number, _offsetBytes: number, _lengthBytes: number): number {
    return -ENOSYS;
  }

  syncfs(_fd: number): number {
    return -ENOSYS;
  }
}

/** -errno of a failed Node call (Node's .errno is already negative). */
function negativeErrno(error: unknown): number {
  return (error as NodeJS.ErrnoException).errno ?? -EBADF;
}

/** A NUL-terminated name as a string. */
function nameOf(name: Uint8Array): string {
  const end = name.indexOf(0);
  return Buffer.from(name.subarray(0, end < 0 ? name.length : end)).toString('utf8');
}
