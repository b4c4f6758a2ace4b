// The scanning cold keeper, where inotify cannot run: every file swept page by page each interval, with only mincore
// and fadvise: about a CPU at ImageNet's 1.28M files.
import fs from 'node:fs';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { LibcBindings } from '../kernel/libc.js';
import type { FileRef } from '../page-cache/page-cache.js';
import { errorCode } from '../kernel/errno.js';
import { sweepFilePages } from '../page-cache/page-sweep.js';
import { emptyKeeperStats, type ColdKeeper, type ColdKeeperStats } from './keeper-types.js';
import { threadCpuClock, type CpuLedger } from '../kernel/cpu-ledger.js';

/** Options of the scanning keeper. */
export interface ScanKeeperOptions {
  /** Time from one scan's start to the next, stretched when a scan is slow. */
  intervalMs: number;
  /** Why inotify was not used, to report in the stats. */
  fallbackReason?: string;
  /** Charged with the keeper's CPU, as 'keeper'. */
  ledger?: CpuLedger;
}

// The largest share of the interval a scan may take before the interval is stretched.
const MAX_DUTY_CYCLE = 0.25;
// Files handled between yields: each costs ~10-20 us, so a turn of the loop stays under ~10 ms.
const FILES_PER_TURN = 256;

/** Starts rescanning `files` every interval; see cold-keeper.ts. */
export function startScanKeeper(libc: LibcBindings, files: readonly FileRef[], options: ScanKeeperOptions): ColdKeeper {
  const setupStarted = performance.now();
  const baseIntervalMs = Math.max(1, options.intervalMs);
  const clock = threadCpuClock(libc);
  const account = options.ledger?.account('keeper');
  // Pages seen resident at the previous scan and not evicted then, by file index (only files with some).
  const previous = new Map<number, Uint8Array>();
  const stats: ColdKeeperStats = {
    ...emptyKeeperStats('scan'),
    ...(options.fallbackReason !== undefined ? { fallbackReason: options.fallbackReason } : {}),
    effectiveIntervalMs: baseIntervalMs,
  };
  let wallMsTotal = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();

  const scan = async (): Promise<void> => {
    let wallMs = 0;
    for (let first = 0; first < files.length; first += FILES_PER_TURN) {
      if (first > 0) {
        await yieldToLoop();
        if (stopped) return;
      }
      const wallStarted = performance.now();
      const cpuStarted = clock();
      for (let index = first; index < Math.min(files.length, first + FILES_PER_TURN); index++)
        sweepFile(libc, files[index].path, index, previous, stats);
      const cpuSec = Math.max(0, clock() - cpuStarted);
      stats.cpuSec += cpuSec;
      account?.add(cpuSec);
      wallMs += performance.now() - wallStarted;
    }
    stats.sweeps++;
    wallMsTotal += wallMs;
    // Stretch by the mean scan time, not the last: one slow scan (the first warms the bindings) must not stick.
    stats.effectiveIntervalMs = Math.max(baseIntervalMs, wallMsTotal / stats.sweeps / MAX_DUTY_CYCLE);
  };

  const enqueue = (): Promise<void> => {
    running = running.then(scan).catch((error: unknown) => failed(stats, '(scan)', error));
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
  stats.setupSec = (performance.now() - setupStarted) / 1000;

  return {
    mechanism: 'scan',
    scanNow: () => (stopped ? running : enqueue()),
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      return { ...stats };
    },
  };
}

/**
 * Sweeps file `index` of the list (a path copy per file would be ~150 MB at 1.28M files), evicting the pages resident
 * at the previous scan too; `previous` keeps what it saw for the next.
 */
function sweepFile(
  libc: LibcBindings,
  path: string,
  index: number,
  previous: Map<number, Uint8Array>,
  stats: ColdKeeperStats,
): void {
  let fd: number;
  try {
    fd = fs.openSync(path, 'r');
  } catch (error) {
    previous.delete(index);
    failed(stats, path, error);
    return;
  }
  try {
    const swept = sweepFilePages(libc, fd, path, previous.get(index));
    if (swept.arrived) previous.set(index, swept.arrived);
    else previous.delete(index);
    if (swept.blind) stats.blindEvictions++;
    else if (swept.evictedBytes > 0) stats.reEvictions++;
    stats.reEvictedBytes += swept.blind ? 0 : swept.evictedBytes;
  } catch (error) {
    previous.delete(index);
    failed(stats, path, error);
  } finally {
    fs.closeSync(fd);
  }
}

function failed(stats: ColdKeeperStats, path: string, error: unknown): void {
  stats.errors++;
  stats.lastError = `${path}: ${errorCode(error)}`;
}
