// The remote source's meter: the bytes of the data its origin sent through the metering proxy during one run, read
// every quarter second and placed at the run's resource samples, with what the run's requests looked like (time to
// first byte, requests in flight, statuses) for the profile.
import type { NetworkUse } from '../../schema/profile.js';
import type { MeteringProxy, ProxyCounters, RequestRecord } from '../../system/network/metering-proxy.js';
import { counterMeter, statusRise } from './counter-poll.js';
import { mean } from '../../analysis/stats.js';
import { tailQuantiles } from '../../quantile.js';
import type { FetchMeter } from './fetch-meter.js';
import type { CpuLedger } from '../../system/kernel/cpu-ledger.js';

const READ_EVERY_MS = 250;

const MESSAGES = {
  windowSource: 'bytes of the data its origin sent through the metering proxy (sampled)',
  wholeRunSource: 'bytes of the data its origin sent through the metering proxy over the whole run',
} as const;

/** Starts metering one run through `proxy`, under the cap it has now; each reading charged to `ledger` as 'meter'. */
export function startNetworkMeter(proxy: MeteringProxy, ledger?: CpuLedger): FetchMeter {
  const capBytesPerSec = proxy.capBytesPerSec;
  proxy.resetMaxInFlight();
  proxy.takeRecords(); // an earlier run's, ended after its meter
  const start = proxy.readCounters();
  const startedAt = performance.now();
  let now = start;
  return counterMeter(
    (poll) => {
      now = proxy.readCounters();
      const since = { requests: now.requests - start.requests, failures: now.failures - start.failures };
      poll.push(now.originBytes - start.originBytes, since);
    },
    READ_EVERY_MS,
    ledger,
    () => {
      const sec = (performance.now() - startedAt) / 1000;
      const network = networkUse(start, now, proxy.takeRecords(), sec, capBytesPerSec);
      const sources = { seriesSource: MESSAGES.windowSource, wholeRunSource: MESSAGES.wholeRunSource };
      return { ...sources, network: { ...network, meter: 'proxy' } };
    },
  );
}

/** What one run fetched: the counters' rise over it, and its requests' latency. */
export function networkUse(
  start: ProxyCounters,
  end: ProxyCounters,
  records: readonly RequestRecord[],
  sec: number,
  capBytesPerSec: number | null,
): NetworkUse {
  // Requests seen whole and answered by the origin; a tunnel's first byte is its TLS handshake's, not a request's.
  const answered = records.filter((r) => r.status > 0 && !r.fromCache && r.firstByteMs !== null);
  const firstBytes = answered.map((r) => r.firstByteMs as number);
  const durations = answered.map((r) => r.totalMs);
  return {
    requests: end.requests - start.requests,
    tunnels: end.tunnels - start.tunnels,
    originBytes: end.originBytes - start.originBytes,
    cacheBytes: end.cacheBytes - start.cacheBytes,
    cacheHits: end.cacheHits - start.cacheHits,
    otherBytes: end.otherBytes - start.otherBytes,
    statuses: statusRise(end.statuses, start.statuses),
    failures: end.failures - start.failures,
    lastFailure: end.failures > start.failures ? end.lastFailure : null,
    firstByteMs: tailQuantiles(firstBytes),
    requestMs: durations.length === 0 ? null : { mean: mean(durations), ...tailQuantiles(durations)! },
    meanInFlight: sec > 0 ? (end.inFlightSec - start.inFlightSec) / sec : 0,
    maxInFlight: end.maxInFlight,
    capBytesPerSec,
  };
}
