// Keeps a dataset cold for the whole measured window of the cold mode.
//
// Evicting once before the run is not enough: a job that reads the dataset
// twice (a second epoch, or a dataset smaller than the window) would quietly
// turn warm and under-report the fetch stall. Two keepers do the work:
//
// - inotify (inotify-keeper.ts): evicts each file when the job closes it, and
//   sweeps only the files held open (large shards) every second or so. Its
//   cost follows the files the job touches, not the dataset's size.
// - scan (scan-keeper.ts): rescans every file's residency each interval. It
//   needs nothing but mincore, and costs a CPU on an ImageNet-sized dataset;
//   it is the fallback where inotify cannot be used, and says why.
//
// docs/method.md ("Keeping the cold mode cold") has the measured costs.
import { ExitCode, UserError } from '../errors.js';
import { loadLibc } from './libc.js';
import type { FileRef } from './page-cache.js';
import { startInotifyKeeper } from './inotify-keeper.js';
import { startScanKeeper } from './scan-keeper.js';
import type { ColdKeeper } from './keeper-types.js';

export type { ColdKeeper, ColdKeeperStats, InotifyStats, KeeperMechanism } from './keeper-types.js';

/** Options of startColdKeeper. */
export interface ColdKeeperOptions {
  /** scan: time from one scan's start to the next; inotify: time between drains of the event queue. */
  intervalMs: number;
  /** inotify: time between sweeps of the files held open (default 1000 ms). */
  sweepIntervalMs?: number;
  /** scan: largest share of the interval a scan may take before the interval is stretched. */
  maxDutyCycle?: number;
  /** 'auto' (default): inotify, falling back to scanning; 'scan': scanning only (benchmarks, tests). */
  mechanism?: 'auto' | 'scan';
}

/**
 * Starts keeping `files` cold. Timers are unref'd (they never keep the process
 * alive) and never throw: failures are counted in the stats. Throws a
 * UserError only where page-cache control is unavailable altogether.
 */
export function startColdKeeper(files: readonly FileRef[], options: ColdKeeperOptions): ColdKeeper {
  const load = loadLibc();
  if (!load.ok) {
    throw new UserError(
      `the cold mode cannot keep the dataset cold here: ${load.reason}; run on Linux with glibc`,
      ExitCode.Environment,
    );
  }
  let fallbackReason: string | undefined;
  if (options.mechanism !== 'scan') {
    const started = startInotifyKeeper(load.libc, files, {
      drainMs: Math.max(1, options.intervalMs),
      sweepMs: Math.max(1, options.sweepIntervalMs ?? 1000),
    });
    if (started.ok) return started.keeper;
    fallbackReason = started.reason;
  }
  return startScanKeeper(load.libc, files, {
    intervalMs: options.intervalMs,
    maxDutyCycle: options.maxDutyCycle,
    ...(fallbackReason !== undefined ? { fallbackReason } : {}),
  });
}
