// Keeps a job's own cache folder empty (WebDataset's cache_dir, Streaming's
// `local`, LITDATA_CACHE_DIR): the cold mode of remote data must fetch every
// sample over the network, and a client that finds a shard in its cache reads
// it from disk instead. The folder is emptied before the run and swept while
// it runs. A sweep removes a file once the job has read it: a client writes
// a download to a file (often under a temporary name, renamed when complete)
// and then opens it to read, and a file removed before that open, or while it
// is still being written, would fail the job; one removed after it is opened
// stays readable through the open file (Linux unlinks, the data stays until
// the last close). "Read since written" is its access time later than its
// modification time: the default relatime mount option updates the access
// time at the first read after a write. On a noatime mount no file looks
// read, so files left unchanged for ten seconds are removed instead.
import { lstatSync, readdirSync, rmdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A file not read since written is removed once left unchanged this long (ms): a noatime mount, a download abandoned.
 */
const SETTLED_MS = 10_000;

/** What a sweep removed. */
export interface Swept {
  files: number;
  bytes: number;
}

/**
 * Removes the files under `dir` (not `dir` itself) read since they were last
 * written, or last changed more than `settledMs` ago (0: all), and the
 * folders they leave empty. Symbolic links are removed, never followed.
 */
export function sweepFolder(dir: string, settledMs = 0, now = Date.now()): Swept {
  const swept: Swept = { files: 0, bytes: 0 };
  const visit = (folder: string): boolean => {
    let entries: string[];
    try {
      entries = readdirSync(folder);
    } catch {
      return false;
    }
    let emptied = true;
    for (const name of entries) {
      const path = join(folder, name);
      try {
        const stats = lstatSync(path);
        if (stats.isDirectory()) {
          if (visit(path)) rmdirSync(path);
          else emptied = false;
        } else if (stats.atimeMs > stats.mtimeMs || now - stats.mtimeMs >= settledMs) {
          unlinkSync(path);
          swept.files++;
          swept.bytes += stats.size;
        } else {
          emptied = false;
        }
      } catch {
        emptied = false; // gone meanwhile, or still in use as a folder
      }
    }
    return emptied;
  };
  visit(dir);
  return swept;
}

/** Sweeps `dir` every `periodMs` until stopped; returns what the sweeps removed. */
export function startSweeper(dir: string, periodMs: number): { stop(): Swept } {
  const total: Swept = { files: 0, bytes: 0 };
  const timer = setInterval(() => {
    const swept = sweepFolder(dir, SETTLED_MS);
    total.files += swept.files;
    total.bytes += swept.bytes;
  }, periodMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      return total;
    },
  };
}
