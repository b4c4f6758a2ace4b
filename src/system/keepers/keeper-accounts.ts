// What an event-driven keeper (fanotify-keeper.ts, inotify-keeper.ts) counts,
// and the two ways its work adds to the counts: a failure, and CPU time.
import type { LibcBindings } from '../kernel/libc.js';
import type { CpuLedger } from '../kernel/cpu-ledger.js';
import { errorCode } from '../kernel/errno.js';
import { keeperMeter, type FileSweep } from '../page-cache/page-sweep.js';
import { emptyKeeperStats, type ColdKeeperStats, type EventKeeperStats, type KeeperMechanism } from './keeper-types.js';

/** The keeper's counters, with helpers that add to them. */
export interface KeeperAccounts {
  stats: ColdKeeperStats;
  /** The same object as stats.events. */
  counters: EventKeeperStats;
  /** Counts a failure on `what` (a path, or '(fanotify read)'), keeping the last one's code. */
  fail(what: string, error: unknown): void;
  /** Runs `work` and adds its CPU time (the thread's clock where there is one) to stats.cpuSec. */
  metered(work: () => void): void;
  /** Counts what a sweep of one file held open did; true when the file is still in use (pages arrived or went). */
  sweptFile(swept: FileSweep): boolean;
}

/**
 * Zero counters for a keeper of `mechanism` watching `watchedDirs` directories; its metered work is charged to `ledger`
 * too, as 'keeper'.
 */
export function keeperAccounts(
  mechanism: KeeperMechanism,
  watchedDirs: number,
  libc: LibcBindings,
  ledger?: CpuLedger,
): KeeperAccounts {
  const counters: EventKeeperStats = {
    watchedDirs,
    closeEvents: 0,
    closeEvictions: 0,
    sweepEvictions: 0,
    queueOverflows: 0,
    overflowSweptFiles: 0,
    lostWatches: 0,
  };
  const stats: ColdKeeperStats = { ...emptyKeeperStats(mechanism), events: counters };
  const meter = keeperMeter(libc);
  const account = ledger?.account('keeper');
  return {
    stats,
    counters,
    fail: (what, error) => {
      stats.errors++;
      stats.lastError = `${what}: ${errorCode(error)}`;
    },
    metered: (work) => {
      const started = meter.start();
      try {
        work();
      } finally {
        const cpuSec = meter.stop(started);
        stats.cpuSec += cpuSec;
        account?.add(cpuSec);
      }
    },
    sweptFile: (swept) => {
      if (swept.blind) stats.blindEvictions++;
      else if (swept.evictedBytes > 0) {
        stats.reEvictions++;
        stats.reEvictedBytes += swept.evictedBytes;
        counters.sweepEvictions++;
      }
      return !swept.blind && (swept.arrived !== undefined || swept.evictedBytes > 0);
    },
  };
}
