// Keeps a job's own cache folder empty (WebDataset's cache_dir, Streaming's
// `local`, LITDATA_CACHE_DIR): the cold mode of remote data must fetch every
// sample over the network, and a client that finds a shard in its cache reads
// it from disk instead. The folder is emptied before the run and swept while
// it runs. A sweep removes only files left unchanged for a moment: a client
// writes a download to a file and then opens it to read, and a file removed
// while it is still being written would fail the job; one removed after it
// is opened stays readable through the open file (Linux unlinks, the data
// stays until the last close).
import { lstatSync, readdirSync, rmdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';

/** Files a sweep left alone while they changed this recently (ms). */
const SETTLED_MS = 1000;

/** What a sweep removed. */
export interface Swept {
  files: number;
  bytes: number;
}

/**
 * Removes the files under `dir` (not `dir` itself) last changed more than
 * `settledMs` ago (0: all), and the folders they leave empty. Symbolic links
 * are removed, never followed.
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
        } else if (now - stats.mtimeMs >= settledMs) {
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
