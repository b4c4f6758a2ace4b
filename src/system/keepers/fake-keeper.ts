import { emptyKeeperStats, type ColdKeeper, type ColdKeeperStats } from './keeper-types.js';

/** A FakeColdKeeper's record of how it was driven. */
export interface FakeKeeperCalls {
  /** scanNow() calls. */
  scans: number;
  /** stop() calls. */
  stops: number;
}

/**
 * A deterministic cold keeper: it touches no page cache and stops with the
 * counters it is given (a scan keeper's empty counters by default), counting
 * how it was driven, so a test can check what a caller makes of a keeper.
 */
export function fakeColdKeeper(stats: Partial<ColdKeeperStats> = {}): ColdKeeper & { calls: FakeKeeperCalls } {
  const calls: FakeKeeperCalls = { scans: 0, stops: 0 };
  const final: ColdKeeperStats = { ...emptyKeeperStats(stats.mechanism ?? 'scan'), ...stats };
  return {
    mechanism: final.mechanism,
    calls,
    scanNow: async () => void calls.scans++,
    stop: async () => {
      calls.stops++;
      return { ...final };
    },
  };
}
