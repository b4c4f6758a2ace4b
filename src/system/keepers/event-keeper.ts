// What the event-driven keepers share: their counters, the timer that drains the queue and sweeps the files held open,
// and the sweep after lost events: every file evicted once, FILES_PER_TURN at a time, draining the queue between turns.
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { LibcBindings } from '../kernel/libc.js';
import { threadCpuClock, type CpuClock, type CpuLedger } from '../kernel/cpu-ledger.js';
import { errorCode } from '../kernel/errno.js';
import type { FileSweep } from '../page-cache/page-sweep.js';
import { EvictionPolicy, type FileBeingRead } from './eviction-policy.js';
import { emptyKeeperStats, type ColdKeeper, type ColdKeeperStats, type EventKeeperStats } from './keeper-types.js';

/** Options of an event-driven keeper. */
export interface EventKeeperOptions {
  /** Time between drains of the event queue. */
  drainMs: number;
  /** Time between sweeps of the files held open (made at the first drain this long after the last). */
  sweepMs: number;
  /** Charged with the keeper's CPU, as 'keeper'. */
  ledger?: CpuLedger;
  /** Dataset bytes the page cache may hold (an LRU of closed files); 0 or absent: keep the dataset cold. */
  capBytes?: number;
}

/** The keeper, or why its mechanism cannot be used here. */
export type KeeperStart<Keeper> = { ok: true; keeper: Keeper } | { ok: false; reason: string };

// A drain that found the queue busy comes back after BUSY_DRAIN_MS.
const BUSY_DRAIN_MS = 5;
const FILES_PER_TURN = 256;

/** An event-driven keeper; a file is whatever the mechanism knows it by (an index in the table, a device and inode). */
export abstract class EventKeeper<File, State extends FileBeingRead = FileBeingRead> implements ColdKeeper {
  readonly stats: ColdKeeperStats;
  protected readonly counters: EventKeeperStats;
  protected readonly policy: EvictionPolicy<File, State>;
  protected stopped = false;
  /** When the files held open were last swept (performance.now()). */
  private sweptAt = performance.now();
  private drainTimer: NodeJS.Timeout | undefined;
  private stopping: Promise<ColdKeeperStats> | undefined;
  private readonly clock: CpuClock;
  private readonly account: ReturnType<CpuLedger['account']> | undefined;
  private overflowPending = false;
  private overflowSweep: Promise<void> | undefined;

  constructor(
    readonly mechanism: 'fanotify' | 'inotify',
    watchedDirs: number,
    /** Files in the dataset's table. */
    private readonly files: number,
    protected readonly libc: LibcBindings,
    private readonly options: EventKeeperOptions,
  ) {
    this.counters = {
      watchedDirs,
      closeEvents: 0,
      closeEvictions: 0,
      sweepEvictions: 0,
      queueOverflows: 0,
      overflowSweptFiles: 0,
      lostWatches: 0,
    };
    this.stats = { ...emptyKeeperStats(mechanism), events: this.counters };
    this.policy = new EvictionPolicy<File, State>(Math.max(0, options.capBytes ?? 0));
    this.clock = threadCpuClock(libc);
    this.account = options.ledger?.account('keeper');
    this.drainTimer = setTimeout(this.tick, options.drainMs);
    this.drainTimer.unref();
  }

  /** Reads the event queue into the handlers; true when it was busy (the next drain comes sooner). */
  protected abstract drain(): boolean;
  /** One sweep of the files being read. */
  protected abstract sweep(): void;
  /** Evicts file `k` of the table after lost events (counting it, or the failure). */
  protected abstract evictAfterOverflow(k: number): void;
  /** Closes the event queue (and what the keeper holds open). */
  protected abstract closeEvents(): void;

  /** Whether the overflow sweep leaves file `k` of the table alone (a cap's LRU holds it). */
  protected keeps(_k: number): boolean {
    return false;
  }

  /** Counts a failure on `what` (a path, or '(fanotify read)'), keeping the last one's code. */
  protected fail(what: string, error: unknown): void {
    this.stats.errors++;
    this.stats.lastError = `${what}: ${errorCode(error)}`;
  }

  /** Runs `work` and adds its CPU time (the thread's clock where there is one) to stats.cpuSec. */
  protected metered(work: () => void): void {
    const started = this.clock();
    try {
      work();
    } finally {
      const cpuSec = Math.max(0, this.clock() - started);
      this.stats.cpuSec += cpuSec;
      this.account?.add(cpuSec);
    }
  }

  /** Counts what a sweep of one file held open did; true when the file is still in use (pages arrived or went). */
  protected sweptFile(swept: FileSweep): boolean {
    if (swept.blind) this.stats.blindEvictions++;
    else if (swept.evictedBytes > 0) {
      this.stats.reEvictions++;
      this.stats.reEvictedBytes += swept.evictedBytes;
      this.counters.sweepEvictions++;
    }
    return !swept.blind && (swept.arrived !== undefined || swept.evictedBytes > 0);
  }

  /** Events were lost: the next tick starts the sweep of every file (an overflow during one asks for another). */
  protected overflowed(): void {
    this.counters.queueOverflows++;
    this.overflowPending = true;
  }

  private readonly tick = (): void => {
    if (this.stopped) return;
    let busy = false;
    this.metered(() => {
      busy = this.drain();
      // The sweep of the files held open rides on the drain's timer: no wake-up of its own.
      const now = performance.now();
      if (now - this.sweptAt < this.options.sweepMs) return;
      this.sweptAt = now;
      if (this.policy.readingCount > 0) this.sweep();
    });
    this.startOverflowSweep();
    this.drainTimer = setTimeout(this.tick, busy ? BUSY_DRAIN_MS : this.options.drainMs);
    this.drainTimer.unref();
  };

  private startOverflowSweep(): void {
    if (!this.overflowPending || this.overflowSweep) return;
    this.overflowSweep = this.sweepAfterOverflow()
      .catch((error: unknown) => this.fail('(overflow sweep)', error))
      .finally(() => (this.overflowSweep = undefined));
  }

  // Every file but those a cap's LRU holds.
  private async sweepAfterOverflow(): Promise<void> {
    while (this.overflowPending && !this.stopped) {
      this.overflowPending = false;
      for (let first = 0; first < this.files && !this.stopped; first += FILES_PER_TURN) {
        this.metered(() => {
          for (let k = first; k < Math.min(this.files, first + FILES_PER_TURN); k++)
            if (!this.keeps(k)) this.evictAfterOverflow(k);
          this.drain();
        });
        await yieldToLoop();
      }
    }
  }

  /** A drain and a sweep now, between any overflow sweep running and any it asks for, both awaited. */
  async scanNow(): Promise<void> {
    if (this.stopped) return;
    await this.overflowSweep;
    this.metered(() => {
      while (this.drain());
      this.sweep();
    });
    this.startOverflowSweep();
    await this.overflowSweep;
  }

  stop(): Promise<ColdKeeperStats> {
    this.stopping ??= (async () => {
      this.stopped = true;
      clearTimeout(this.drainTimer);
      await this.overflowSweep;
      this.closeEvents();
      return { ...this.stats, events: { ...this.counters } };
    })();
    return this.stopping;
  }
}
