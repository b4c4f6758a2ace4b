// The fanotify keeper's event plumbing: a mark on each directory of the dataset, and the queue read into what the job
// did, each event with a descriptor the kernel opened. Events carry no name: a file is known by device and inode. The
// queue is unlimited.
import fs from 'node:fs';
import { AT_FDCWD, EAGAIN, FAN, type LibcBindings } from '../kernel/libc.js';
import { forEachFanotifyEvent } from '../kernel/fanotify.js';
import { errnoError, errnoName } from '../kernel/errno.js';
import type { FileTable } from '../dataset/file-table.js';
import { watchedDirs } from './keeper-dataset.js';

const MARK_MASK = FAN.access | FAN.closeNowrite | FAN.eventOnChild;
// The kernel opens a descriptor for every event a read returns: 8 KiB (~340 events) stays far below 1,024 files.
const EVENT_BUFFER_BYTES = 8 * 1024;
// At most 4 MiB of events (~170k) per drain, so one drain cannot hog the loop.
const MAX_READS_PER_DRAIN = 512;
// struct fanotify_event_metadata's size: the fewest bytes an event takes.
const EVENT_METADATA_BYTES = 24;

/** What the job did, each with the event's descriptor; the plumbing closes it afterwards unless read() keeps it. */
export interface FanotifyHandlers {
  /** Events were lost: closes, and reads of files held open. */
  overflow(): void;
  /** The job closed the file open on `fd`. */
  closed(fd: number): void;
  /** The job read the file open on `fd`; true when the keeper keeps the descriptor (it then closes it itself). */
  read(fd: number): boolean;
  /** Counts a failure on `what` (a path, or '(fanotify read)'). */
  failed(what: string, error: unknown): void;
}

/** The marks on a table's directories, or why fanotify cannot be used here. */
export type FanotifyMarkStart = { ok: true; events: FanotifyEvents } | { ok: false; reason: string };

/** Marks every directory of `table` that holds files for its children's reads and closes; never throws. */
export function markTable(libc: LibcBindings, table: FileTable): FanotifyMarkStart {
  const dirs = watchedDirs(table).map((watched) => watched.path);
  const flags = FAN.classNotif | FAN.cloexec | FAN.nonblock | FAN.unlimitedQueue | FAN.unlimitedMarks;
  const fd = libc.fanotifyInit(flags, FAN.eventFileFlags);
  if (fd < 0) {
    const code = errnoName(-fd);
    return {
      ok: false,
      reason: code === 'EPERM' ? 'fanotify needs CAP_SYS_ADMIN (root)' : `fanotify_init failed (${code})`,
    };
  }
  for (const dir of dirs) {
    const result = libc.fanotifyMark(fd, FAN.markAdd | FAN.markOnlyDir, MARK_MASK, AT_FDCWD, dir);
    if (result < 0) {
      libc.close(fd);
      return { ok: false, reason: `cannot mark ${dir} (fanotify_mark: ${errnoName(-result)})` };
    }
  }
  return { ok: true, events: new FanotifyEvents(libc, fd, dirs.length) };
}

/** A keeper's fanotify group. */
export class FanotifyEvents {
  private readonly buffer = Buffer.alloc(EVENT_BUFFER_BYTES);
  /** The descriptors of one buffer's events, closed together once the buffer is handled. */
  private readonly toClose = new Int32Array(Math.ceil(EVENT_BUFFER_BYTES / EVENT_METADATA_BYTES));
  private closing = 0;
  /** False once close_range answered that it cannot run here: descriptors are closed one by one. */
  private closeRangeWorks = true;

  constructor(
    private readonly libc: LibcBindings,
    private readonly fd: number,
    /** Directories marked. */
    readonly marks: number,
  ) {}

  /** The group's reader into `handlers`: each call reads at most MAX_READS_PER_DRAIN buffers; true when more is left. */
  reader(handlers: FanotifyHandlers): () => boolean {
    const visit = (mask: number, eventFd: number): void => this.dispatch(mask, eventFd, handlers);
    const unreadable = (): void =>
      handlers.failed('(fanotify read)', new Error('an event this code cannot read (another metadata version)'));
    return () => {
      for (let reads = 0; reads < MAX_READS_PER_DRAIN; reads++) {
        const bytes = this.libc.read(this.fd, this.buffer);
        if (bytes === -EAGAIN || bytes === 0) return false;
        if (bytes < 0) {
          handlers.failed('(fanotify read)', errnoError(-bytes, 'read'));
          return false;
        }
        try {
          forEachFanotifyEvent(this.buffer, bytes, visit, unreadable);
        } finally {
          this.closeCollected();
        }
      }
      return true;
    };
  }

  /** Closes the events' descriptors not kept: a run of consecutive numbers is one close_range (2 us less each). */
  private closeCollected(): void {
    const fds = this.toClose.subarray(0, this.closing).sort();
    this.closing = 0;
    let first = 0;
    for (let i = 1; i <= fds.length; i++) {
      if (i < fds.length && fds[i] === fds[i - 1] + 1) continue;
      this.closeRun(fds[first], fds[i - 1]);
      first = i;
    }
  }

  private closeRun(first: number, last: number): void {
    if (first === last || !this.closeRangeWorks || this.libc.closeRange(first, last) !== 0) {
      // close_range missing (ENOSYS) or refused: one by one, for good.
      if (first !== last) this.closeRangeWorks = false;
      for (let fd = first; fd <= last; fd++) this.libc.close(fd);
    }
  }

  /** Closes the group; its marks go, and the queued events' references are freed. */
  close(): void {
    this.libc.close(this.fd);
  }

  private dispatch(mask: number, eventFd: number, handlers: FanotifyHandlers): void {
    if (mask & FAN.queueOverflow) {
      handlers.overflow();
      return;
    }
    if (eventFd < 0) return;
    let keep = false;
    try {
      if (mask & FAN.onDir) return;
      if (mask & FAN.closeNowrite) handlers.closed(eventFd);
      else if (mask & FAN.access) keep = handlers.read(eventFd);
    } catch (error) {
      handlers.failed(pathOf(eventFd), error);
    } finally {
      if (!keep) this.toClose[this.closing++] = eventFd;
    }
  }
}

/** The identity of the file open on `fd`, `${dev}:${ino}`; throws where fstat fails. */
export function fileKey(fd: number): string {
  const stat = fs.fstatSync(fd);
  return `${stat.dev}:${stat.ino}`;
}

/** The path a descriptor was opened on (for messages), or its /proc name when that cannot be read. */
export function pathOf(fd: number): string {
  const link = `/proc/self/fd/${fd}`;
  try {
    return fs.readlinkSync(link);
  } catch {
    return link;
  }
}
