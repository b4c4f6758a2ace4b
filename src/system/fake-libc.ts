import { FADV, type LibcBindings } from './libc.js';

// errno numbers the fake answers with (Linux's).
const EBADF = 9;
const EINVAL = 22;
const ENOSYS = 38;

/**
 * A deterministic libc for tests of the page-cache code that takes bindings
 * (scanFilePages, residentBytesOfFd, sweepFilePages): an in-memory page cache
 * per file descriptor, which mmap/mincore read and posix_fadvise changes
 * (DONTNEED drops a range, WILLNEED brings it in). The descriptors are real
 * ones a test opened, so fstat still sees the file's size. inotify is
 * missing (ENOSYS), as on a kernel without it, and the thread CPU clock
 * stands still.
 */
export class FakeLibc implements LibcBindings {
  /** The page size the fake's files are counted in. */
  readonly pageSizeBytes: number;
  /** Resident pages per descriptor: one byte per page, 1 when resident. */
  private readonly pages = new Map<number, Uint8Array>();
  /** Mappings by address: the descriptor and the mapping's first page. */
  private readonly mappings = new Map<number, { fd: number; firstPage: number }>();
  private nextAddress = 1 << 30;
  /** Every posix_fadvise call, in order: descriptor, offset, length and advice. */
  readonly advice: { fd: number; offsetBytes: number; lengthBytes: number; advice: number }[] = [];
  /** An errno mincore answers with instead of working, while set. */
  failMincore = 0;

  constructor(pageSizeBytes = 4096) {
    this.pageSizeBytes = pageSizeBytes;
  }

  /** Sets which pages of the file open as `fd` (of `bytes` bytes) are resident. */
  setResident(fd: number, bytes: number, residentPages: readonly number[]): void {
    const pages = new Uint8Array(Math.ceil(bytes / this.pageSizeBytes));
    for (const page of residentPages) pages[page] = 1;
    this.pages.set(fd, pages);
  }

  /** The resident pages of `fd`, in order. */
  residentPages(fd: number): number[] {
    return [...(this.pages.get(fd) ?? [])].flatMap((resident, page) => (resident ? [page] : []));
  }

  posixFadvise(fd: number, offsetBytes: number, lengthBytes: number, advice: number): number {
    this.advice.push({ fd, offsetBytes, lengthBytes, advice });
    const pages = this.pages.get(fd);
    if (!pages) return EBADF;
    const first = Math.floor(offsetBytes / this.pageSizeBytes);
    const end = lengthBytes === 0 ? pages.length : Math.min(pages.length, Math.ceil((offsetBytes + lengthBytes) / this.pageSizeBytes));
    if (advice === FADV.dontNeed) pages.fill(0, first, end);
    else if (advice === FADV.willNeed) pages.fill(1, first, end);
    return 0;
  }

  mmap(lengthBytes: number, _prot: number, _flags: number, fd: number, offsetBytes: number): number {
    if (!this.pages.has(fd)) return -EBADF;
    if (lengthBytes <= 0 || offsetBytes % this.pageSizeBytes !== 0) return -EINVAL;
    const address = this.nextAddress;
    this.nextAddress += Math.ceil(lengthBytes / this.pageSizeBytes + 1) * this.pageSizeBytes;
    this.mappings.set(address, { fd, firstPage: offsetBytes / this.pageSizeBytes });
    return address;
  }

  munmap(address: number): number {
    return this.mappings.delete(address) ? 0 : EINVAL;
  }

  mincore(address: number, lengthBytes: number, vec: Uint8Array): number {
    if (this.failMincore !== 0) return this.failMincore;
    // The mapping that holds the address: the one with the highest start at or below it.
    let start = -1;
    for (const mapped of this.mappings.keys()) if (mapped <= address && mapped > start) start = mapped;
    const mapping = this.mappings.get(start);
    if (!mapping) return EINVAL;
    const pages = this.pages.get(mapping.fd)!;
    const first = mapping.firstPage + (address - start) / this.pageSizeBytes;
    const count = Math.ceil(lengthBytes / this.pageSizeBytes);
    for (let i = 0; i < count; i++) vec[i] = pages[first + i] ?? 0;
    return 0;
  }

  sync(): void {}

  inotifyInit1(): number {
    return -ENOSYS;
  }

  inotifyAddWatch(): number {
    return -ENOSYS;
  }

  inotifyRmWatch(): number {
    return ENOSYS;
  }

  read(): number {
    return -EBADF;
  }

  open(): number {
    return -ENOSYS;
  }

  close(): number {
    return 0;
  }

  threadCpuSec(): number {
    return 0;
  }
}
