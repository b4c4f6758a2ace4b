import { emptyKeeperStats, type ColdKeeper, type ColdKeeperStats } from '../../src/system/keepers/keeper-types.js';

/** A FakeColdKeeper's record of how it was driven. */
export interface FakeKeeperCalls {
  /** scanNow() calls. */
  scans: number;
  /** stop() calls. */
  stops: number;
}

/** A deterministic cold keeper (no page cache touched): it stops with the counters given, counting its calls. */
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
