// The fake kernels the keeper tests share: what the libc bindings would see
// of the kernel's inotify or fanotify queue and page cache, driven by the
// test. FakeInotifyKernel is all in memory (made-up paths, whole-file
// residency); FakeFanotifyLibc is a FakeLibc (real files, pages per file)
// whose fanotify group hands out the events the test queues.
import fs from 'node:fs';
import { endianness } from 'node:os';
import path from 'node:path';
import { FakeLibc } from './fake-libc.js';
import { EAGAIN, FADV, IN, type LibcBindings } from '../../src/system/kernel/libc.js';

/**
 * A fake kernel behind the libc bindings: files with whole-file residency, an
 * inotify queue fed by the fake job's reads and closes (and by the keeper's
 * own closes, as the real kernel does), and evictions recorded in order.
 */
export class FakeInotifyKernel {
  readonly resident = new Map<string, number>();
  readonly evictions: string[] = [];
  private readonly queue: Buffer[] = [];
  private readonly fds = new Map<number, string>();
  private readonly dirs = new Map<number, string>();
  private nextFd = 100_000;
  constructor(readonly sizes: Map<string, number>) {
    for (const file of sizes.keys()) this.resident.set(file, 0);
  }

  read(file: string): void {
    this.resident.set(file, this.sizes.get(file)!);
    this.event(file, IN.access);
  }
  close(file: string): void {
    this.event(file, IN.closeNowrite);
  }
  /** The job reads a file whole and closes it. */
  readAndClose(file: string): void {
    this.read(file);
    this.close(file);
  }
  total(): number {
    return [...this.resident.values()].reduce((a, b) => a + b, 0);
  }

  private event(file: string, mask: number): void {
    const wd = [...this.dirs].find(([, dir]) => dir === path.dirname(file))?.[0];
    if (wd === undefined) return;
    const name = Buffer.from(path.basename(file));
    const len = Math.ceil((name.length + 1) / 4) * 4;
    const event = Buffer.alloc(16 + len);
    event.writeInt32LE(wd, 0);
    event.writeUInt32LE(mask, 4);
    event.writeUInt32LE(len, 12);
    name.copy(event, 16);
    this.queue.push(event);
  }

  readonly libc: LibcBindings = {
    pageSizeBytes: 4096,
    posixFadvise: (fd, _offset, length, advice) => {
      const file = this.fds.get(fd)!;
      if (advice === FADV.dontNeed && length === 0) {
        this.resident.set(file, 0);
        this.evictions.push(path.basename(file));
      }
      return 0;
    },
    // One address range per descriptor: its number in the high bits.
    mmap: (_length, _prot, _flags, fd) => fd * 2 ** 32,
    munmap: () => 0,
    mincore: (address, length, vec) => {
      const fd = Math.floor(address / 2 ** 32);
      const firstPage = (address - fd * 2 ** 32) / 4096;
      const residentPages = Math.ceil(this.resident.get(this.fds.get(fd)!)! / 4096);
      for (let i = 0; i < Math.ceil(length / 4096); i++) vec[i] = firstPage + i < residentPages ? 1 : 0;
      return 0;
    },
    sync: () => undefined,
    inotifyInit1: () => 99_999,
    inotifyAddWatch: (_fd, dir) => {
      this.dirs.set(this.dirs.size + 1, dir);
      return this.dirs.size;
    },
    // The cache cap runs on inotify only.
    fanotifyInit: () => -38,
    fanotifyMark: () => -38,
    read: (_fd, buffer) => {
      let used = 0;
      while (this.queue.length > 0 && used + this.queue[0].length <= buffer.length) {
        const event = this.queue.shift()!;
        event.copy(buffer as Buffer, used);
        used += event.length;
      }
      return used === 0 ? -EAGAIN : used;
    },
    open: (file) => {
      const fd = this.nextFd++;
      this.fds.set(fd, file);
      return fd;
    },
    close: (fd) => {
      const file = this.fds.get(fd);
      this.fds.delete(fd);
      if (file !== undefined) this.close(file);
      return 0;
    },
    closeRange: (first, last) => {
      for (let fd = first; fd <= last; fd++) this.libc.close(fd);
      return 0;
    },
    threadCpuSec: () => -1,
  };
}

/** The descriptor of FakeFanotifyLibc's fanotify group. */
const GROUP_FD = 100_000;

/** struct fanotify_event_metadata, version 3 unless told. */
export function fanotifyEvent(mask: number, fd: number, version = 3): Buffer {
  const buffer = Buffer.alloc(24);
  const le = endianness() === 'LE';
  if (le) buffer.writeUInt32LE(24, 0);
  else buffer.writeUInt32BE(24, 0);
  buffer[4] = version;
  if (le) buffer.writeBigUInt64LE(BigInt(mask), 8);
  else buffer.writeBigUInt64BE(BigInt(mask), 8);
  if (le) buffer.writeInt32LE(fd, 16);
  else buffer.writeInt32BE(fd, 16);
  return buffer;
}

/** A FakeLibc with a fanotify group whose events the test queues; real opens and closes, counted. */
export class FakeFanotifyLibc extends FakeLibc {
  readonly queue: Buffer[] = [];
  readonly marked: string[] = [];
  readonly closed: number[] = [];
  /** close_range calls, as [first, last]; their descriptors are in `closed` too. */
  readonly closedRanges: [number, number][] = [];
  opened = 0;
  groupOpen = false;

  override fanotifyInit(): number {
    this.groupOpen = true;
    return GROUP_FD;
  }

  override fanotifyMark(_fd: number, _flags: number, _mask: number, _dirFd: number, dir: string): number {
    this.marked.push(dir);
    return 0;
  }

  override read(fd: number, buffer: Uint8Array): number {
    if (fd !== GROUP_FD || this.queue.length === 0) return -EAGAIN;
    const bytes = Buffer.concat(this.queue.splice(0));
    bytes.copy(buffer as Buffer);
    return bytes.length;
  }

  override open(file: string): number {
    this.opened++;
    return fs.openSync(file, 'r');
  }

  override closeRange(first: number, last: number): number {
    this.closedRanges.push([first, last]);
    return super.closeRange(first, last);
  }

  override close(fd: number): number {
    if (fd === GROUP_FD) {
      this.groupOpen = false;
      return 0;
    }
    this.closed.push(fd);
    fs.closeSync(fd);
    return 0;
  }
}
