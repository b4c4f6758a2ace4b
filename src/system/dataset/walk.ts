// The walk behind listDataset: every regular file under the roots into a file table. Sync stats first (statx: 2.2 us a
// file, against 30-60 us for an async stat); when most of a slice turn slow (cold metadata), parallel async stats
// overlap the I/O. A directory is entered once (symlink loops end).
import fs from 'node:fs';
import path from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { O_DIRECTORY_CLOEXEC, S_IFDIR, S_IFREG, type FileSyscalls } from '../kernel/file-syscalls.js';
import { errnoError, errorCode } from '../kernel/errno.js';
import { splitDev } from '../kernel/block-device.js';
import { FileTableBuilder } from './file-table.js';

// Entries stat'ed synchronously between two turns of the event loop.
const SYNC_SLICE_ENTRIES = 512;
// When most sync stats of a slice take longer than this, metadata is coming from storage: go parallel.
export const SLOW_SYNC_STAT_US = 200;

/** How a walk reads metadata. */
export interface WalkOptions {
  /** Parallel stat calls in flight once metadata proves slow to read. */
  concurrency: number;
  /** Microseconds per sync stat above which (for most of a slice) the walk goes parallel; <= 0: from the start. */
  slowStatMicros: number;
  /** statx through koffi, or null for Node's fs. */
  calls: FileSyscalls | null;
}

/** What a stat said about one entry. */
export interface EntryStat {
  kind: 'file' | 'dir' | 'other';
  bytes: number;
  uid: number;
  /** 'major:minor:inode'. */
  key: string;
}

/** One file of a directory, as the table takes it. */
interface TableFile {
  name: string;
  bytes: number;
  foreign: boolean;
}

/** A walk of some roots into one table; entries it cannot read are counted, not thrown. */
export class DatasetWalk {
  readonly builder = new FileTableBuilder();
  /** Entries that could not be read. */
  skippedEntries = 0;
  /** The first of them, as 'path: CODE'. */
  firstSkipped: string | undefined;
  private readonly visitedDirs = new Set<string>();
  private parallel: boolean;
  private readonly uid = typeof process.geteuid === 'function' ? process.geteuid() : -1;

  constructor(private readonly options: WalkOptions) {
    this.parallel = options.slowStatMicros <= 0;
  }

  /** Adds a root that is one file. */
  addFile(root: string, stat: fs.BigIntStats): void {
    const slash = root.lastIndexOf('/');
    this.builder.addDirectory(root.slice(0, slash + 1), [
      { name: root.slice(slash + 1), bytes: Number(stat.size), foreign: this.isForeign(Number(stat.uid)) },
    ]);
  }

  /** Walks a root directory depth first, in path order. */
  async addDirectory(root: string, stat: fs.BigIntStats): Promise<void> {
    const rootKey = fromStats(stat).key;
    if (this.visitedDirs.has(rootKey)) return;
    this.visitedDirs.add(rootKey);
    const queue = [path.join(root)];
    while (queue.length > 0) {
      const dir = queue.pop()!;
      const subdirs = await this.readDirectory(dir, prefixOf(dir));
      for (let k = subdirs.length - 1; k >= 0; k--) queue.push(subdirs[k]);
      await yieldToLoop();
    }
  }

  private skip(entry: string, error: unknown): void {
    this.skippedEntries++;
    this.firstSkipped ??= `${entry}: ${errorCode(error)}`;
  }

  /** Whether mincore may not show the pages of a file owned by `owner` to us. */
  private isForeign(owner: number): boolean {
    return this.uid !== 0 && owner !== this.uid;
  }

  // One directory: its entries, stat'ed; files into the table, sub-directories returned.
  private async readDirectory(dir: string, prefix: string): Promise<string[]> {
    const names = await this.entryNames(dir);
    const files: TableFile[] = [];
    const subdirs: string[] = [];
    const take = (name: string, stat: EntryStat): void => {
      if (stat.kind === 'file') files.push({ name, bytes: stat.bytes, foreign: this.isForeign(stat.uid) });
      else if (stat.kind === 'dir' && !this.visitedDirs.has(stat.key)) {
        this.visitedDirs.add(stat.key);
        subdirs.push(prefix + name);
      }
    };
    const next = this.parallel ? 0 : await this.statInSlices(dir, prefix, names, take);
    if (next < names.length) await this.statInParallel(prefix, names, next, take);
    this.builder.addDirectory(prefix, files);
    // In order of prefix (name + '/'), so that a depth-first walk adds directories in path order.
    return subdirs.sort((a, b) => (`${a}/` < `${b}/` ? -1 : `${a}/` > `${b}/` ? 1 : 0));
  }

  /** The names worth a stat in `dir`; none when it cannot be read (counted). */
  private async entryNames(dir: string): Promise<string[]> {
    let entries: fs.Dirent[];
    try {
      entries = this.parallel
        ? await fs.promises.readdir(dir, { withFileTypes: true })
        : fs.readdirSync(dir, { withFileTypes: true });
    } catch (error) {
      this.skip(dir, error);
      return [];
    }
    // Hidden entries (.cache, .git) are not samples, as for ImageFolder; nor are sockets, FIFOs and devices.
    const names: string[] = [];
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      if (entry.isFile() || entry.isSymbolicLink() || entry.isDirectory() || isUnknownType(entry))
        names.push(entry.name);
    }
    return names;
  }

  /** Sync stats, a slice at a time, until the names end or stats turn slow; returns the first name left. */
  private async statInSlices(
    dir: string,
    prefix: string,
    names: string[],
    take: (name: string, stat: EntryStat) => void,
  ): Promise<number> {
    const { calls, slowStatMicros } = this.options;
    let next = 0;
    const dirFd = calls ? calls.open(dir, O_DIRECTORY_CLOEXEC) : -1;
    try {
      while (next < names.length && !this.parallel) {
        const sliceEnd = Math.min(names.length, next + SYNC_SLICE_ENTRIES);
        let done = 0;
        let slow = 0;
        for (; next < sliceEnd; next++, done++) {
          const started = performance.now();
          try {
            take(names[next], this.statSync(dirFd, prefix, names[next]));
          } catch (error) {
            this.skip(prefix + names[next], error);
          } finally {
            if ((performance.now() - started) * 1000 > slowStatMicros) slow++;
          }
        }
        // Most of the slice slow, not a few: a busy CPU preempts a few calls, a cold disk slows them all.
        if (slow > done / 2) this.parallel = true;
        else if (next < names.length) await yieldToLoop();
      }
    } finally {
      if (dirFd >= 0) calls?.close(dirFd);
    }
    return next;
  }

  /** Async stats of names[first..], `concurrency` in flight. */
  private async statInParallel(
    prefix: string,
    names: string[],
    first: number,
    take: (name: string, stat: EntryStat) => void,
  ): Promise<void> {
    let next = first;
    const worker = async (): Promise<void> => {
      while (next < names.length) {
        const name = names[next++];
        try {
          take(name, fromStats(await fs.promises.stat(prefix + name, { bigint: true })));
        } catch (error) {
          this.skip(prefix + name, error);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency, names.length - first) }, worker));
  }

  private statSync(dirFd: number, prefix: string, name: string): EntryStat {
    const { calls } = this.options;
    if (calls && dirFd >= 0) {
      const facts = calls.statx(dirFd, Buffer.from(`${name}\0`));
      if (typeof facts === 'number') throw errnoError(-facts);
      return {
        kind: facts.type === S_IFREG ? 'file' : facts.type === S_IFDIR ? 'dir' : 'other',
        bytes: facts.bytes,
        uid: facts.uid,
        key: facts.key,
      };
    }
    return fromStats(fs.statSync(prefix + name, { bigint: true }));
  }
}

/** The prefix of a directory's entries: 'a/b' gives 'a/b/', '/' gives '/', '.' gives ''. */
function prefixOf(dir: string): string {
  if (dir === '.') return '';
  return dir.endsWith('/') ? dir : `${dir}/`;
}

function fromStats(stat: fs.BigIntStats): EntryStat {
  const { major, minor } = splitDev(stat.dev);
  return {
    kind: stat.isFile() ? 'file' : stat.isDirectory() ? 'dir' : 'other',
    bytes: Number(stat.size),
    uid: Number(stat.uid),
    key: `${major}:${minor}:${stat.ino}`,
  };
}

// DT_UNKNOWN: some file systems (older XFS, some FUSE) do not fill d_type; stat decides.
function isUnknownType(entry: fs.Dirent): boolean {
  return (
    !entry.isFile() &&
    !entry.isDirectory() &&
    !entry.isSymbolicLink() &&
    !entry.isFIFO() &&
    !entry.isSocket() &&
    !entry.isBlockDevice() &&
    !entry.isCharacterDevice()
  );
}
