// One file's turn in a cold keeper's sweep: evict the pages resident now AND
// at the previous sweep, remember the ones that just arrived.
//
// Pages that arrived since the previous sweep are left alone for one interval:
// the job is probably reading them right now (read-ahead included), and
// dropping them under its feet would make it read them twice, counting storage
// traffic a real cold run would not have. The comparison is page by page, so a
// large file being streamed (a TFRecord or WebDataset shard) loses what the job
// has already consumed while the pages just read ahead stay.
import fs from 'node:fs';
import type { LibcBindings } from '../kernel/libc.js';
import { adviseDontNeed, mincoreIsTrustworthy, scanFilePages } from './page-cache.js';
import { errnoError } from '../kernel/errno.js';

/** What one sweep of one file did. */
export interface FileSweep {
  /**
   * Pages resident now that were not at the previous sweep (one bit per page), to pass back next time; undefined when
   * none.
   */
  arrived?: Uint8Array;
  /** Bytes advised out of the cache (0 when nothing was old enough). */
  evictedBytes: number;
  /** True when mincore cannot show this file's pages to us, so the whole file was evicted blind. */
  blind: boolean;
}

/**
 * Sweeps the open file `fd` (at `path`, for the ownership check). `before` is
 * the `arrived` of the previous sweep of the same file. Throws a Node-style
 * error (with .code) when mincore or fadvise fail.
 */
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
    // mincore would report such a file as never resident, so the keeper could
    // not keep it cold: evict it whole every sweep instead, at the price of
    // sometimes dropping pages just read ahead for the job.
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

/**
 * Measures the CPU of a keeper's synchronous handlers: the thread CPU clock
 * where libc has it (time the thread was preempted on a busy machine is not
 * the keeper's cost); otherwise the whole process's CPU over the same slices,
 * an upper bound (other threads of the process count too), but CPU time, as
 * the profile's keeper.cpuSec says, never wall time.
 */
export function keeperMeter(libc: LibcBindings): { start(): number; stop(started: number): number } {
  const threadClock = libc.threadCpuSec() >= 0;
  const processCpuSec = (): number => {
    const used = process.cpuUsage();
    return (used.user + used.system) / 1e6;
  };
  const now = threadClock ? () => libc.threadCpuSec() : processCpuSec;
  return { start: now, stop: (started) => Math.max(0, now() - started) };
}
