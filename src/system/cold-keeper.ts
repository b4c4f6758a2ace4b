// Keeps a dataset cold for the whole measured window of the cold mode.
//
// Evicting once before the run is not enough: a job that reads the dataset
// twice (a second epoch, or a dataset smaller than the window) would quietly
// turn warm and under-report the fetch stall. The keeper scans the files'
// residency every interval and evicts the pages that were ALREADY resident at
// the previous scan. Pages that arrived since then are left alone, for one
// interval: the job is probably reading them right now (read-ahead included),
// and dropping them under its feet would make it read them twice, counting
// storage traffic that a real cold run would not have. A job consumes a sample
// within milliseconds of it arriving, so one interval's grace costs nothing
// in coldness.
//
// The comparison is page by page, so a large file being streamed (a TFRecord
// or WebDataset shard) loses what the job has already consumed while the pages
// just read ahead stay.
import fs from 'node:fs';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { ExitCode, UserError } from '../errors.js';
import { loadLibc, type LibcBindings } from './libc.js';
import {
  adviseDontNeed,
  errorCode,
  errnoName,
  mincoreIsTrustworthy,
  scanFilePages,
  type FileRef,
} from './page-cache.js';

/** Counters of a cold keeper, returned by stop(). */
export interface ColdKeeperStats {
  /** Completed scans over all files. */
  scans: number;
  /** Times a file had pages evicted again (a file counts once per scan). */
  reEvictions: number;
  /** Bytes evicted again, summed over scans. */
  reEvictedBytes: number;
  /** Evictions of whole files whose residency mincore cannot show to this user (see scanFile), summed over scans. */
  blindEvictions: number;
  /** Per-file failures (vanished, unreadable, mincore/fadvise errors), summed over scans. */
  errors: number;
  /** The last failure, as 'path: CODE', if any. */
  lastError?: string;
  /** Synchronous work of the scans, summed (the keeper's own CPU cost). */
  scanMsTotal: number;
  /** The longest scan. */
  scanMsMax: number;
  /** The interval in force at the end: intervalMs, or longer when scans were slow. */
  effectiveIntervalMs: number;
}

/** A running cold keeper. */
export interface ColdKeeper {
  /** Runs one scan now (after any scan in progress); for tests and a final sweep. */
  scanNow(): Promise<void>;
  /** Stops the timer, waits for a scan in progress to end, and returns the counters. */
  stop(): Promise<ColdKeeperStats>;
}

/** Options of startColdKeeper. */
export interface ColdKeeperOptions {
  /** Time from one scan's start to the next, stretched when a scan is slow. */
  intervalMs: number;
  /** Largest share of the interval a scan may take before the interval is stretched. */
  maxDutyCycle?: number;
}

const FILES_PER_TURN = 256;

/**
 * Starts re-evicting `files` every `intervalMs`. The timer is unref'd (it never
 * keeps the process alive) and never throws: failures are counted in the stats.
 */
export function startColdKeeper(files: readonly FileRef[], options: ColdKeeperOptions): ColdKeeper {
  const load = loadLibc();
  if (!load.ok) {
    throw new UserError(
      `the cold mode cannot keep the dataset cold here: ${load.reason}; run on Linux with glibc`,
      ExitCode.Environment,
    );
  }
  const libc = load.libc;
  const paths = files.map((file) => file.path);
  const maxDutyCycle = options.maxDutyCycle ?? 0.25;
  const baseIntervalMs = Math.max(1, options.intervalMs);
  // Pages seen resident at the previous scan and not evicted then, per file index;
  // only files with such pages have an entry.
  const previous = new Map<number, Uint8Array>();
  const stats: ColdKeeperStats = {
    scans: 0,
    reEvictions: 0,
    reEvictedBytes: 0,
    blindEvictions: 0,
    errors: 0,
    scanMsTotal: 0,
    scanMsMax: 0,
    effectiveIntervalMs: baseIntervalMs,
  };
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();

  const fail = (path: string, error: unknown): void => {
    stats.errors++;
    stats.lastError = `${path}: ${errorCode(error)}`;
  };

  const scan = async (): Promise<void> => {
    let busyMs = 0;
    let sliceStart = performance.now();
    for (let index = 0; index < paths.length; index++) {
      if (index > 0 && index % FILES_PER_TURN === 0) {
        busyMs += performance.now() - sliceStart;
        await yieldToLoop();
        if (stopped) return;
        sliceStart = performance.now();
      }
      try {
        scanFile(libc, index, paths[index], previous, stats);
      } catch (error) {
        fail(paths[index], error);
      }
    }
    busyMs += performance.now() - sliceStart;
    stats.scans++;
    stats.scanMsTotal += busyMs;
    stats.scanMsMax = Math.max(stats.scanMsMax, busyMs);
    // Stretch by the mean scan time, not the last one: one slow scan (the first
    // one warms the libc bindings; a busy machine) must not slow the keeper for good.
    stats.effectiveIntervalMs = Math.max(baseIntervalMs, stats.scanMsTotal / stats.scans / maxDutyCycle);
  };

  const enqueue = (): Promise<void> => {
    running = running.then(scan).catch((error: unknown) => fail('(scan)', error));
    return running;
  };

  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      void enqueue().then(schedule);
    }, stats.effectiveIntervalMs);
    timer.unref();
  };
  schedule();

  return {
    scanNow: () => (stopped ? running : enqueue()),
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      return { ...stats };
    },
  };
}

// One file of one scan: evict the pages resident now and at the previous scan,
// remember the ones that just arrived.
function scanFile(
  libc: LibcBindings,
  index: number,
  path: string,
  previous: Map<number, Uint8Array>,
  stats: ColdKeeperStats,
): void {
  let fd: number;
  try {
    fd = fs.openSync(path, 'r');
  } catch (error) {
    previous.delete(index);
    throw error;
  }
  try {
    const stat = fs.fstatSync(fd);
    const bytes = stat.size;
    if (bytes === 0) return;
    if (!mincoreIsTrustworthy(path, stat)) {
      // mincore would report such a file as never resident, so the keeper could
      // not keep it cold: evict it whole every scan instead, at the price of
      // sometimes dropping pages just read ahead for the job.
      adviseDontNeed(libc, fd, 0, 0);
      stats.blindEvictions++;
      return;
    }
    const pageBytes = libc.pageSizeBytes;
    const pages = Math.ceil(bytes / pageBytes);
    const before = previous.get(index);
    let arrived: Uint8Array | undefined;
    const runs: [number, number][] = [];
    let runStart = -1;
    const errno = scanFilePages(libc, fd, bytes, (first, vec, count) => {
      for (let i = 0; i < count; i++) {
        const page = first + i;
        const resident = (vec[i] & 1) === 1;
        const wasResident = before !== undefined && (before[page >> 3] & (1 << (page & 7))) !== 0;
        const old = resident && wasResident;
        if (old) {
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
    if (errno !== 0) {
      previous.delete(index);
      throw Object.assign(new Error(`mincore: ${errnoName(errno)}`), { code: errnoName(errno) });
    }
    if (runStart >= 0) runs.push([runStart, pages]);
    if (arrived) previous.set(index, arrived);
    else previous.delete(index);
    if (runs.length === 0) return;
    for (const [start, end] of runs) {
      adviseDontNeed(libc, fd, start * pageBytes, (end - start) * pageBytes);
      stats.reEvictedBytes += Math.min(bytes, end * pageBytes) - start * pageBytes;
    }
    stats.reEvictions++;
  } finally {
    fs.closeSync(fd);
  }
}
