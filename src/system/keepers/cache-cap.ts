// A dataset cache cap: the page cache holds at most `capBytes` of the dataset,
// as an LRU of the files the job has closed (validate's cache points).
//
// It caps the dataset's pages directly, in user space: the inotify keeper
// (inotify-keeper.ts) sees each file the job closes, enters it in an LRU
// (cache-lru.ts) and evicts the least recently closed files with
// posix_fadvise(DONTNEED) while the LRU holds more than the cap. No root and
// no cgroup are needed, it works alike on cgroup v1, v2 and none, and the
// job's own memory (a CUDA context, pinned buffers, loader workers) cannot
// move it, which a memory cgroup's limit could not promise: a job's memory
// that moves by gigabytes moved the cache with it (issue 13). A cold keeper is
// this cap at 0 bytes.
//
// What it cannot hold down: pages the job maps (mmap), which DONTNEED skips,
// and files read under another path than the dataset's listing. What it cannot
// hold up: the kernel may still reclaim the cached files under memory pressure.
// Both show in the residency readings, which is why validate measures them.
import { ExitCode, UserError } from '../../errors.js';
import { loadLibc } from '../kernel/libc.js';
import { KEEPER_TEXT } from './keeper-text.js';
import type { FileRef } from '../page-cache/page-cache.js';
import type { CpuLedger } from '../kernel/cpu-ledger.js';
import { startInotifyKeeper, type InotifyKeeper } from './inotify-keeper.js';

/** Options of startCacheCap. */
export interface CacheCapOptions {
  /** Dataset bytes the page cache may hold. */
  capBytes: number;
  /** Time between drains of the close events (default 100 ms). */
  drainMs?: number;
  /** Time between measurements of the files held open (default 1000 ms). */
  sweepMs?: number;
  /** Charged with the cap's CPU, as 'keeper'. */
  ledger?: CpuLedger;
}

/** A running cap, or why it cannot run here (the point is then not run, with the reason). */
export type CacheCapStart = { ok: true; cap: InotifyKeeper } | { ok: false; reason: string };

/** Starts capping the page cache of `files` at `capBytes`; never throws. */
export function startCacheCap(
  files: readonly (FileRef & { bytes?: number })[],
  options: CacheCapOptions,
): CacheCapStart {
  const load = loadLibc();
  if (!load.ok) return { ok: false, reason: load.reason };
  const started = startInotifyKeeper(load.libc, files, {
    drainMs: Math.max(1, options.drainMs ?? 100),
    sweepMs: Math.max(1, options.sweepMs ?? 1000),
    capBytes: Math.max(0, options.capBytes),
    ledger: options.ledger,
  });
  return started.ok ? { ok: true, cap: started.keeper } : { ok: false, reason: started.reason };
}

/** startCacheCap, or a UserError naming why the cache cannot be capped here. */
export function requireCacheCap(
  files: readonly (FileRef & { bytes?: number })[],
  options: CacheCapOptions,
): InotifyKeeper {
  const started = startCacheCap(files, options);
  if (started.ok) return started.cap;
  throw new UserError(KEEPER_TEXT.cannotCap(started.reason), ExitCode.Environment);
}
