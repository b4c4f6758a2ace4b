// One file's turn in a cold keeper's sweep: evict the pages resident now AND at the previous sweep; the ones that just
// arrived (read-ahead the job is reading) stay one interval, so a streamed shard loses only what was consumed.
import fs from 'node:fs';
import type { LibcBindings } from '../kernel/libc.js';
import { adviseDontNeed, mincoreIsTrustworthy, scanFilePages } from './page-cache.js';
import { errnoError } from '../kernel/errno.js';

/** What one sweep of one file did. */
export interface FileSweep {
  /** Pages resident now that were not at the previous sweep (a bit each), to pass back next time; undefined: none. */
  arrived?: Uint8Array;
  /** Bytes advised out of the cache (0 when nothing was old enough). */
  evictedBytes: number;
  /** True when mincore cannot show this file's pages to us, so the whole file was evicted blind. */
  blind: boolean;
}

/** Sweeps the open file `fd` (`path`: for the ownership check) after the sweep that found `before`; throws on failure. */
export function sweepFilePages(
  libc: LibcBindings,
  fd: number,
  path: string,
  before: Uint8Array | undefined,
): FileSweep {
  const stat = fs.fstatSync(fd);
  const bytes = stat.size;
  if (bytes === 0) return { evictedBytes: 0, blind: false };
  if (!mincoreIsTrustworthy(path, stat)) {
    // mincore would show it never resident: evicted whole every sweep, read-ahead pages too.
    adviseDontNeed(libc, fd, 0, 0);
    return { evictedBytes: bytes, blind: true };
  }
  const pageBytes = libc.pageSizeBytes;
  const pages = Math.ceil(bytes / pageBytes);
  let arrived: Uint8Array | undefined;
  const runs: [number, number][] = [];
  let runStart = -1;
  const errno = scanFilePages(libc, fd, bytes, (first, vec, count) => {
    for (let i = 0; i < count; i++) {
      const page = first + i;
      const resident = (vec[i] & 1) === 1;
      const wasResident = before !== undefined && (before[page >> 3] & (1 << (page & 7))) !== 0;
      if (resident && wasResident) {
        if (runStart < 0) runStart = page;
      } else {
        if (runStart >= 0) runs.push([runStart, page]);
        runStart = -1;
        if (resident) {
          arrived ??= new Uint8Array(Math.ceil(pages / 8));
          arrived[page >> 3] |= 1 << (page & 7);
        }
      }
    }
  });
  if (errno !== 0) throw errnoError(errno, 'mincore');
  if (runStart >= 0) runs.push([runStart, pages]);
  let evictedBytes = 0;
  for (const [start, end] of runs) {
    adviseDontNeed(libc, fd, start * pageBytes, (end - start) * pageBytes);
    evictedBytes += Math.min(bytes, end * pageBytes) - start * pageBytes;
  }
  return { ...(arrived ? { arrived } : {}), evictedBytes, blind: false };
}
