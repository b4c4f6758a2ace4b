// Keeps a job's own cache folder empty (WebDataset's cache_dir), so the cold mode fetches every sample. A file goes
// once the job has read it (atime past mtime): it stays readable through the open file. On noatime, files unchanged
// SETTLED_MS go.
import { lstatSync, readdirSync, rmdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';

// A file not read since written is removed once left unchanged this long (ms): a noatime mount, a download abandoned.
const SETTLED_MS = 10_000;

/** What a sweep removed. */
export interface Swept {
  files: number;
  bytes: number;
}

/** Removes the files under `dir` read since written, or unchanged `settledMs` (0: all), and the folders left empty. */
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
