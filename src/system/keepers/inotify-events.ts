// The inotify keeper's event plumbing: a watch on each directory of the dataset, the queue read into what the job did
// to which file, and the keeper's own closes (counted per file) told apart from the job's, lest an eviction ask for
// another.
import { EAGAIN, IN, O_RDONLY_CLOEXEC, type LibcBindings } from '../kernel/libc.js';
import { forEachInotifyEvent } from '../kernel/inotify.js';
import { errnoError, errnoName } from '../kernel/errno.js';
import { parseKernelNumber, readTextOrNull } from '../kernel/read-text.js';
import type { FileTable } from '../dataset/file-table.js';
import { watchedDirs } from './keeper-dataset.js';

// Messages shown to users (in the profile's state proof), in one table.
const MESSAGES = {
  tooManyDirs: (dirs: number, limit: number) =>
    `the dataset spans ${dirs} directories but fs.inotify.max_user_watches is ${limit}; ` +
    `raise it (sysctl fs.inotify.max_user_watches=${Math.max(dirs * 2, 65536)}) to keep the dataset cold at a ` +
    `fraction of the CPU`,
  initFailed: (code: string) => `inotify_init1 failed (${code})`,
  watchFailed: (dir: string, code: string) =>
    code === 'ENOSPC'
      ? `cannot watch ${dir}: the user's inotify watches are used up (fs.inotify.max_user_watches); raise it ` +
        `with sysctl`
      : `cannot watch ${dir} (inotify_add_watch: ${code})`,
} as const;

const WATCH_MASK = IN.access | IN.closeNowrite | IN.closeWrite | IN.onlyDir;
const EVENT_BUFFER_BYTES = 64 * 1024;
// At most 4 MiB of events (~100k) per drain, so one drain cannot hog the loop.
const MAX_READS_PER_DRAIN = 64;
const DEFAULT_QUEUED_EVENTS = 16384;

/** What the job did, as the events tell it; the keeper's own closes are not passed on. */
export interface InotifyHandlers {
  /** Events were lost (the queue overflowed): what was believed about reads and closes is void. */
  overflow(): void;
  /** The job read file `k`. */
  read(k: number): void;
  /** The job closed file `k`. */
  closed(k: number): void;
  /** The kernel removed a watch (a directory deleted or unmounted). */
  lostWatch(): void;
  /** The queue could not be read. */
  failed(error: unknown): void;
}

/** Why `dirs` directories cannot be watched under a limit of `limit` watches, or null when they can. */
export function watchLimitReason(dirs: number, limit: number | null): string | null {
  return limit !== null && dirs > limit ? MESSAGES.tooManyDirs(dirs, limit) : null;
}

/** The watches on a table's directories, or why inotify cannot be used here. */
export type InotifyWatchStart = { ok: true; events: InotifyEvents } | { ok: false; reason: string };

/** Watches every directory of `table` that holds files; never throws. */
export function watchTable(libc: LibcBindings, table: FileTable): InotifyWatchStart {
  const dirs = watchedDirs(table);
  const limitReason = watchLimitReason(
    dirs.length,
    parseKernelNumber(readTextOrNull('/proc/sys/fs/inotify/max_user_watches')),
  );
  if (limitReason) return { ok: false, reason: limitReason };
  const fd = libc.inotifyInit1(IN.nonblock | IN.cloexec);
  if (fd < 0) return { ok: false, reason: MESSAGES.initFailed(errnoName(-fd)) };
  // The table's directories behind each watch: two prefixes naming one directory share its watch.
  const dirsByWd = new Map<number, number[]>();
  for (const { dir, path } of dirs) {
    const wd = libc.inotifyAddWatch(fd, path, WATCH_MASK);
    if (wd < 0) {
      libc.close(fd);
      return { ok: false, reason: MESSAGES.watchFailed(path, errnoName(-wd)) };
    }
    dirsByWd.set(wd, [...(dirsByWd.get(wd) ?? []), dir]);
  }
  return { ok: true, events: new InotifyEvents(libc, table, fd, dirsByWd) };
}

/** A keeper's inotify queue over its table. */
export class InotifyEvents {
  /** Events the queue holds at most (fs.inotify.max_queued_events). */
  readonly queueCapacity =
    parseKernelNumber(readTextOrNull('/proc/sys/fs/inotify/max_queued_events')) ?? DEFAULT_QUEUED_EVENTS;
  private readonly buffer = Buffer.alloc(EVENT_BUFFER_BYTES);
  /** Closes still to come from the keeper's own opens, per file. */
  private readonly ownCloses = new Map<number, number>();

  constructor(
    private readonly libc: LibcBindings,
    private readonly table: FileTable,
    private readonly fd: number,
    private readonly dirsByWd: Map<number, number[]>,
  ) {}

  /** Directories watched. */
  get watches(): number {
    return this.dirsByWd.size;
  }

  /** The queue's reader into `handlers`: each call reads at most MAX_READS_PER_DRAIN buffers; returns the events. */
  reader(handlers: InotifyHandlers): () => number {
    const visit = (wd: number, mask: number, name: Buffer): void => this.dispatch(wd, mask, name, handlers);
    return () => {
      let events = 0;
      for (let reads = 0; reads < MAX_READS_PER_DRAIN; reads++) {
        const bytes = this.libc.read(this.fd, this.buffer);
        if (bytes === -EAGAIN || bytes === 0) break;
        if (bytes < 0) {
          handlers.failed(errnoError(-bytes, 'read'));
          break;
        }
        events += forEachInotifyEvent(this.buffer, bytes, visit);
      }
      return events;
    };
  }

  /** Opens file `k` for the keeper's own use (its close event is then ignored); throws where it cannot. */
  withOwnDescriptor(k: number, work: (fd: number) => void): void {
    const own = this.libc.open(this.table.path(k), O_RDONLY_CLOEXEC);
    if (own < 0) throw errnoError(-own, 'open');
    try {
      work(own);
    } finally {
      this.libc.close(own);
      this.ownCloses.set(k, (this.ownCloses.get(k) ?? 0) + 1);
    }
  }

  /** Closes the queue; closing it removes every watch (inotify(7)). */
  close(): void {
    this.libc.close(this.fd);
  }

  private dispatch(wd: number, mask: number, name: Buffer, handlers: InotifyHandlers): void {
    if (mask & IN.queueOverflow) {
      // Lost events may include the keeper's own closes too.
      this.ownCloses.clear();
      handlers.overflow();
      return;
    }
    if (mask & IN.ignored) {
      if (this.dirsByWd.delete(wd)) handlers.lostWatch();
      return;
    }
    if (mask & IN.isDir || name.length === 0) return;
    // One search of the table by the name's bytes (no string made), then maps keyed by the file's index.
    const k = this.fileOf(wd, name);
    if (k < 0) return;
    const own = mask & IN.access ? undefined : this.ownCloses.get(k);
    if (own !== undefined) {
      if (own > 1) this.ownCloses.set(k, own - 1);
      else this.ownCloses.delete(k);
      return;
    }
    if (mask & IN.access) handlers.read(k);
    else handlers.closed(k);
  }

  /** The file an event names: its watch's directories searched by the name's bytes; -1 when not a dataset file. */
  private fileOf(wd: number, name: Buffer): number {
    const inDirs = this.dirsByWd.get(wd);
    if (inDirs === undefined) return -1;
    for (const dir of inDirs) {
      const k = this.table.indexOfName(dir, name);
      if (k >= 0) return k;
    }
    return -1;
  }
}
