import { ENOSYS } from '../../src/system/kernel/file-syscalls.js';
import type { FakeLibc } from './fake-libc.js';
import { NodeFileSyscalls } from '../../src/system/kernel/node-file-syscalls.js';

/** What FakeFileSyscalls can pretend. */
export interface FakeFileSyscallsOptions {
  /** Whether cachestat(2) exists (default true); without it the page-cache code falls back to mincore. */
  cachestat?: boolean;
}

/**
 * The per-file calls on real files through Node's fs, cachestat answered from a FakeLibc's page cache (syncfs only
 * counts): residency, evict and warm on a page cache a test sets.
 */
export class FakeFileSyscalls extends NodeFileSyscalls {
  /** syncfs(2) calls. */
  syncs = 0;
  /** readFirstByte calls. */
  firstByteReads = 0;

  constructor(
    /** The page cache cachestat reads. */
    private readonly libc: FakeLibc,
    private readonly options: FakeFileSyscallsOptions = {},
  ) {
    super();
  }

  /** Reads the real file's first byte; the fake's page cache stays as the kernel's does for a resident page. */
  override readFirstByte(fd: number): number {
    this.firstByteReads++;
    return super.readFirstByte(fd);
  }

  override cachedPages(fd: number, offsetBytes: number, lengthBytes: number): number {
    return this.options.cachestat === false ? -ENOSYS : this.libc.cachedPages(fd, offsetBytes, lengthBytes);
  }

  override syncfs(): number {
    this.syncs++;
    return 0;
  }
}
