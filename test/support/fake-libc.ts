import fs from 'node:fs';
import { FADV, type LibcBindings } from '../../src/system/kernel/libc.js';

// errno numbers the fake answers with (Linux's).
const EBADF = 9;
const EINVAL = 22;
const ENOSYS = 38;

/**
 * A deterministic libc for tests of the page-cache code: an in-memory page cache per real file for mmap/mincore and
 * posix_fadvise. inotify and fanotify answer ENOSYS; the thread CPU clock stands still.
 */
export class FakeLibc implements LibcBindings {
  /** The page size the fake's files are counted in. */
  readonly pageSizeBytes: number;
  /** Resident pages per file ('dev:ino'): one byte per page, 1 when resident. */
  private readonly pages = new Map<string, Uint8Array>();
  /** Mappings by address: the file's pages and the mapping's first page. */
  private readonly mappings = new Map<number, { pages: Uint8Array; firstPage: number }>();
  private nextAddress = 1 << 30;
  /** Every posix_fadvise call, in order: descriptor, offset, length and advice. */
  readonly advice: { fd: number; offsetBytes: number; lengthBytes: number; advice: number }[] = [];
  /** An errno (positive) whose negation mincore answers with instead of working, while set. */
  failMincore = 0;

  constructor(pageSizeBytes = 4096) {
    this.pageSizeBytes = pageSizeBytes;
  }

  /** Sets which pages of the file at `path` are resident (the others are not). */
  setResident(path: string, residentPages: readonly number[]): void {
    const stat = fs.statSync(path);
    const pages = new Uint8Array(Math.ceil(stat.size / this.pageSizeBytes));
    for (const page of residentPages) pages[page] = 1;
    this.pages.set(`${stat.dev}:${stat.ino}`, pages);
  }

  /** The resident pages of the file at `path`, in order. */
  residentPages(path: string): number[] {
    const stat = fs.statSync(path);
    return [...(this.pages.get(`${stat.dev}:${stat.ino}`) ?? [])].flatMap((resident, page) => (resident ? [page] : []));
  }

  /** Cached pages of `fd` in [offset, offset + length) (0: to the end), as cachestat(2); -EBADF for an unknown file. */
  cachedPages(fd: number, offsetBytes: number, lengthBytes: number): number {
    const pages = this.pagesOf(fd);
    if (!pages) return -EBADF;
    const [first, end] = this.pageRange(pages, offsetBytes, lengthBytes);
    let cached = 0;
    for (let page = first; page < end; page++) cached += pages[page];
    return cached;
  }

  /** The page cache of the file open as `fd` (a new, empty one the first time), or undefined when fd is not open. */
  private pagesOf(fd: number): Uint8Array | undefined {
    let stat: fs.Stats;
    try {
      stat = fs.fstatSync(fd);
    } catch {
      return undefined;
    }
    const key = `${stat.dev}:${stat.ino}`;
    let pages = this.pages.get(key);
    if (!pages) {
      pages = new Uint8Array(Math.ceil(stat.size / this.pageSizeBytes));
      this.pages.set(key, pages);
    }
    return pages;
  }

  private pageRange(pages: Uint8Array, offsetBytes: number, lengthBytes: number): [number, number] {
    const first = Math.floor(offsetBytes / this.pageSizeBytes);
    const end =
      lengthBytes === 0
        ? pages.length
        : Math.min(pages.length, Math.ceil((offsetBytes + lengthBytes) / this.pageSizeBytes));
    return [first, end];
  }

  posixFadvise(fd: number, offsetBytes: number, lengthBytes: number, advice: number): number {
    this.advice.push({ fd, offsetBytes, lengthBytes, advice });
    const pages = this.pagesOf(fd);
    if (!pages) return -EBADF;
    const [first, end] = this.pageRange(pages, offsetBytes, lengthBytes);
    if (advice === FADV.dontNeed) pages.fill(0, first, end);
    else if (advice === FADV.willNeed) pages.fill(1, first, end);
    return 0;
  }

  mmap(lengthBytes: number, _prot: number, _flags: number, fd: number, offsetBytes: number): number {
    const pages = this.pagesOf(fd);
    if (!pages) return -EBADF;
    if (lengthBytes <= 0 || offsetBytes % this.pageSizeBytes !== 0) return -EINVAL;
    const address = this.nextAddress;
    this.nextAddress += Math.ceil(lengthBytes / this.pageSizeBytes + 1) * this.pageSizeBytes;
    this.mappings.set(address, { pages, firstPage: offsetBytes / this.pageSizeBytes });
    return address;
  }

  munmap(address: number): number {
    return this.mappings.delete(address) ? 0 : -EINVAL;
  }

  mincore(address: number, lengthBytes: number, vec: Uint8Array): number {
    if (this.failMincore !== 0) return -this.failMincore;
    // The mapping that holds the address: the one with the highest start at or below it.
    let start = -1;
    for (const mapped of this.mappings.keys()) if (mapped <= address && mapped > start) start = mapped;
    const mapping = this.mappings.get(start);
    if (!mapping) return -EINVAL;
    const pages = mapping.pages;
    const first = mapping.firstPage + (address - start) / this.pageSizeBytes;
    const count = Math.ceil(lengthBytes / this.pageSizeBytes);
    for (let i = 0; i < count; i++) vec[i] = pages[first + i] ?? 0;
    return 0;
  }

  /** sync(2) calls. */
  syncs = 0;

  sync(): void {
    this.syncs++;
  }

  inotifyInit1(): number {
    return -ENOSYS;
  }

  inotifyAddWatch(): number {
    return -ENOSYS;
  }

  fanotifyInit(): number {
    return -ENOSYS;
  }

  fanotifyMark(_fd: number, _flags: number, _mask: number, _dirFd: number, _path: string): number {
    return -ENOSYS;
  }

  read(_fd: number, _buffer: Uint8Array): number {
    return -EBADF;
  }

  open(_path: string, _flags: number): number {
    return -ENOSYS;
  }

  close(_fd: number): number {
    return 0;
  }

  /** Closes each descriptor of the range through close(), so a fake that counts closes counts these. */
  closeRange(first: number, last: number): number {
    for (let fd = first; fd <= last; fd++) this.close(fd);
    return 0;
  }

  threadCpuSec(): number {
    return 0;
  }
}
