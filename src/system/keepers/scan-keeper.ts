// The scanning cold keeper: every interval, sweep every file of the dataset
// page by page (page-sweep.ts). It needs only mincore and fadvise, and its
// cost grows with the dataset: about a CPU at ImageNet's 1.28M files (see
// docs/method.md). The fallback where inotify cannot be used.
import fs from 'node:fs';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { LibcBindings } from '../kernel/libc.js';
import type { FileRef } from '../page-cache/page-cache.js';
import { errorCode } from '../kernel/errno.js';
import { keeperMeter, sweepFilePages } from '../page-cache/page-sweep.js';
import { emptyKeeperStats, type ColdKeeper, type ColdKeeperStats } from './keeper-types.js';
import type { CpuLedger } from '../kernel/cpu-ledger.js';

/** Options of the scanning keeper. */
export interface ScanKeeperOptions {
  /** Time from one scan's start to the next, stretched when a scan is slow. */
  intervalMs: number;
  /** Largest share of the interval a scan may take before the interval is stretched (default 0.25). */
  maxDutyCycle?: number;
  /** Why inotify was not used, to report in the stats. */
  fallbackReason?: string;
  /** Charged with the keeper's CPU, as 'keeper'. */
  ledger?: CpuLedger;
}

// Files handled between yields: each costs ~10-20 us, so a turn of the loop stays under ~10 ms.
const FILES_PER_TURN = 256;

/** Starts rescanning `files` every interval; see cold-keeper.ts. */
export function startScanKeeper(libc: LibcBindings, files: readonly FileRef[], options: ScanKeeperOptions): ColdKeeper {
  const setupStarted = performance.now();
  const keeper = new ScanKeeper(libc, files, options);
  keeper.schedule();
  keeper.stats.setupSec = (performance.now() - setupStarted) / 1000;
  return keeper;
}

class ScanKeeper implements ColdKeeper {
  readonly mechanism = 'scan';
  readonly stats: ColdKeeperStats;
  private readonly maxDutyCycle: number;
  private readonly baseIntervalMs: number;
  private readonly meter: ReturnType<typeof keeperMeter>;
  private readonly account: ReturnType<CpuLedger['account']> | undefined;
  // Pages seen resident at the previous scan and not evicted then, per file
  // index; only files with such pages have an entry.
  private readonly previous = new Map<number, Uint8Array>();
  private wallMsTotal = 0;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly libc: LibcBindings,
    private readonly files: readonly FileRef[],
    options: ScanKeeperOptions,
  ) {
    this.maxDutyCycle = options.maxDutyCycle ?? 0.25;
    this.baseIntervalMs = Math.max(1, options.intervalMs);
    this.meter = keeperMeter(libc);
    this.account = options.ledger?.account('keeper');
    this.stats = {
      ...emptyKeeperStats('scan'),
      ...(options.fallbackReason !== undefined ? { fallbackReason: options.fallbackReason } : {}),
      effectiveIntervalMs: this.baseIntervalMs,
    };
  }

  scanNow(): Promise<void> {
    return this.stopped ? this.running : this.enqueue();
  }

  async stop(): Promise<ColdKeeperStats> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    return { ...this.stats };
  }

  schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.enqueue().then(() => this.schedule());
    }, this.stats.effectiveIntervalMs);
    this.timer.unref();
  }

  private enqueue(): Promise<void> {
    this.running = this.running.then(() => this.scan()).catch((error: unknown) => this.fail('(scan)', error));
    return this.running;
  }

  private fail(path: string, error: unknown): void {
    this.stats.errors++;
    this.stats.lastError = `${path}: ${errorCode(error)}`;
  }

  private async scan(): Promise<void> {
    const { files, stats } = this;
    let wallMs = 0;
    for (let first = 0; first < files.length; first += FILES_PER_TURN) {
      if (first > 0) {
        await yieldToLoop();
        if (this.stopped) return;
      }
      const wallStarted = performance.now();
      const cpuStarted = this.meter.start();
      for (let index = first; index < Math.min(files.length, first + FILES_PER_TURN); index++) this.sweepOne(index);
      const cpuSec = this.meter.stop(cpuStarted);
      stats.cpuSec += cpuSec;
      this.account?.add(cpuSec);
      wallMs += performance.now() - wallStarted;
    }
    stats.sweeps++;
    this.wallMsTotal += wallMs;
    // Stretch by the mean scan time, not the last one: one slow scan (the first
    // one warms the libc bindings; a busy machine) must not slow the keeper for good.
    stats.effectiveIntervalMs = Math.max(this.baseIntervalMs, this.wallMsTotal / stats.sweeps / this.maxDutyCycle);
  }

  private sweepOne(index: number): void {
    // Read from the list as needed: over a compact file table, a copy of every path would be ~150 MB at 1.28M files.
    const path = this.files[index].path;
    const { previous, stats } = this;
    let fd: number;
    try {
      fd = fs.openSync(path, 'r');
    } catch (error) {
      previous.delete(index);
      this.fail(path, error);
      return;
    }
    try {
      const swept = sweepFilePages(this.libc, fd, path, previous.get(index));
      if (swept.arrived) previous.set(index, swept.arrived);
      else previous.delete(index);
      if (swept.blind) stats.blindEvictions++;
      else if (swept.evictedBytes > 0) stats.reEvictions++;
      stats.reEvictedBytes += swept.blind ? 0 : swept.evictedBytes;
    } catch (error) {
      previous.delete(index);
      this.fail(path, error);
    } finally {
      fs.closeSync(fd);
    }
  }
}
