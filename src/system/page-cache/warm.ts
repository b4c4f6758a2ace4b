// Warming a dataset into the page cache for the cached mode: advice where the kernel can read a file ahead itself,
// parallel reads for the rest, and the residency each file was left with.
import fs from 'node:fs';
import { FADV, type LibcBindings } from '../kernel/libc.js';
import type { FileSyscalls } from '../kernel/file-syscalls.js';
import { errorCode } from '../kernel/errno.js';
import type { CpuAccount } from '../kernel/cpu-ledger.js';
import {
  ResidencyProbe,
  countResident,
  emptyResidency,
  forEachOpenFile,
  perFileCalls,
  systemBindings,
  measureResidency,
  unknownFile,
  type FileCursor,
  type PageCacheBindings,
} from './file-pages.js';
import type { FileRef, Residency } from './page-cache.js';

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
  /** The files' residency as the warm-up left it (each file checked once brought in); absent without libc. */
  residency?: Residency;
}

// Files up to this size get POSIX_FADV_WILLNEED, a call per READAHEAD_CHUNK_BYTES (the read-ahead window).
const WILLNEED_MAX_BYTES = 1024 * 1024;
const READAHEAD_CHUNK_BYTES = 128 * 1024;

/**
 * Brings `files` into the page cache, touching only what is not there: a small file gets POSIX_FADV_WILLNEED (7.9 us a
 * 1 KiB file, against 80 us through fs.promises), the rest is read by `concurrency` readers. Every file left resident
 * has its first byte read, so the relatime atime update (on ext4, an inode block read from storage) happens now:
 * without it, a job on 1.28M resident files read 297% of its bytes from storage.
 */
export async function warm(
  files: readonly FileRef[],
  options: {
    concurrency?: number;
    bufferBytes?: number;
    /** Read each resident file's first byte (default true; see above). A warm that follows one that did can skip it. */
    touchAccessTimes?: boolean;
    /** Charged with the residency passes' CPU; the parallel reads run in Node's threads, not charged. */
    cpu?: CpuAccount;
  } = {},
  bindings: PageCacheBindings = systemBindings(),
): Promise<WarmResult> {
  const started = performance.now();
  const warming = new Warming(
    files,
    Math.max(1, Math.floor(options.concurrency ?? 8)),
    Math.max(64 * 1024, Math.floor(options.bufferBytes ?? 4 * 1024 * 1024)),
  );
  const libcLoad = bindings.libc;
  if (libcLoad.ok) {
    const calls = perFileCalls(bindings.calls);
    warming.result.residency = await adviseThenRead(warming, libcLoad.libc, calls, options);
  } else {
    warming.marks.fill(READ);
    await warming.readMarked();
  }
  warming.result.elapsedMs = performance.now() - started;
  return warming.result;
}

// Per file: 0 nothing to do, ADVISED read ahead on advice, READ to be read here.
const ADVISED = 1;
const READ = 2;

/** One warm-up's marks and tally, and its parallel readers. */
class Warming {
  readonly result: WarmResult = {
    files: 0,
    bytesRead: 0,
    residentFiles: 0,
    advisedFiles: 0,
    failedFiles: 0,
    elapsedMs: 0,
  };
  readonly marks: Uint8Array;
  private next = 0;

  constructor(
    readonly files: readonly FileRef[],
    private readonly concurrency: number,
    private readonly bufferBytes: number,
  ) {
    this.marks = new Uint8Array(files.length);
  }

  fail(path: string, code: string): void {
    this.result.failedFiles++;
    this.result.firstError ??= `${path}: ${code}`;
  }

  /** Reads each file marked READ to the end: `concurrency` readers, each reusing one buffer. */
  async readMarked(): Promise<void> {
    await Promise.all(Array.from({ length: Math.min(this.concurrency, this.files.length) }, () => this.reader()));
  }

  private async reader(): Promise<void> {
    const buffer = READ_BUFFERS.take(this.bufferBytes);
    try {
      for (;;) {
        while (this.next < this.files.length && this.marks[this.next] !== READ) this.next++;
        if (this.next >= this.files.length) return;
        const { path } = this.files[this.next++];
        try {
          // Not `+= await`: that would read the total before the await and lose the other readers' bytes.
          const bytesRead = await readToEnd(path, buffer);
          this.result.bytesRead += bytesRead;
          this.result.files++;
        } catch (error) {
          this.fail(path, errorCode(error));
        }
      }
    } finally {
      READ_BUFFERS.give(buffer);
    }
  }
}

/** The warm-up with libc: residency and advice, the advised looked at again, the reads, a last look. */
async function adviseThenRead(
  warming: Warming,
  libc: LibcBindings,
  calls: FileSyscalls,
  options: { touchAccessTimes?: boolean; cpu?: CpuAccount },
): Promise<Residency> {
  const { files, marks, result } = warming;
  const probe = new ResidencyProbe(libc, calls);
  const touch = options.touchAccessTimes !== false;
  const seen = emptyResidency();
  /** Whether the open file is wholly resident; if so it is counted, and its access time touched. */
  const wholeInCache = (cursor: FileCursor): boolean => {
    const resident = probe.residentBytes(cursor);
    if (typeof resident !== 'number' || resident < cursor.bytes) return false;
    countResident(seen, cursor.bytes, resident);
    if (touch) calls.readFirstByte(cursor.fd);
    return true;
  };
  const failed = (cursor: FileCursor, code: string): void => {
    warming.fail(cursor.path(), code);
    unknownFile(seen, `${cursor.path()}: ${code}`);
  };
  const advise = (fd: number, bytes: number): boolean => {
    for (let offset = 0; offset < bytes; offset += READAHEAD_CHUNK_BYTES) {
      if (libc.posixFadvise(fd, offset, Math.min(READAHEAD_CHUNK_BYTES, bytes - offset), FADV.willNeed) !== 0)
        return false;
    }
    return true;
  };
  await forEachOpenFile(
    files,
    calls,
    options.cpu,
    (cursor) => {
      if (wholeInCache(cursor)) result.residentFiles++;
      else marks[cursor.index] = cursor.bytes <= WILLNEED_MAX_BYTES && advise(cursor.fd, cursor.bytes) ? ADVISED : READ;
    },
    failed,
  );
  // The advice was given to every file before this pass, so most reads have landed.
  await forEachOpenFile(
    files,
    calls,
    options.cpu,
    (cursor) => {
      if (wholeInCache(cursor)) {
        result.files++;
        result.advisedFiles++;
        result.bytesRead += cursor.bytes;
      } else marks[cursor.index] = READ;
    },
    failed,
    (index) => marks[index] === ADVISED,
  );
  await warming.readMarked();
  // What was read here is looked at once read: only those files get a second look.
  return measureResidency(files, calls, probe, options.cpu, seen, (index) => marks[index] === READ);
}

// The readers' buffers, kept between warms: 32 MiB allocated anew outside V8's heap cost a full collection.
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
