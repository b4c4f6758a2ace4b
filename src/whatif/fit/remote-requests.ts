/**
 * Remote data's requests: how long one waits for its first byte (L, the cold mode's median, at the proxy or in the
 * job's clients: the network's round trips and the server's time to answer), how many a sample needs (one object per
 * sample, or one shard for many samples), and how many each loader worker keeps in flight (q). A worker that waits L
 * for every request fetches at most q / (r L) samples a second whatever the bandwidth: the fetch stage's latency term,
 * added to its bandwidth term (model.ts, stageTimes): each request waits L, then its bytes share the network. Local
 * files and HTTPS tunnels (no requests seen) have no latency term.
 */
import type { Profile } from '../../schema/profile.js';
import { formatRate } from '../../units.js';
import { parameter, type Fitted, type ModelParameter } from './fitted.js';
import { proven, type MeasuredModes } from './modes.js';
import { probeBandwidth } from './storage.js';

export interface RemoteRequestsFit {
  /** Seconds from a request to its first byte (median), L; 0 where none was timed (local files, HTTPS tunnels). */
  requestLatencySec: number;
  /** Requests per sample, r: 1 for an object per sample, 1 / samples per shard. */
  requestsPerSample: number;
  /** Requests in flight per loader worker (per rank without workers) in the cold mode, q; null where none was seen. */
  profiledInFlightPerWorker: number | null;
  /** Whether the data is remote objects (a cache of them is a local folder of whole objects, not the page cache). */
  remoteObjects: boolean;
}

/** A cold mode that read this share of what the network carries kept it saturated. */
const SATURATED_SHARE = 0.9;

const NONE: RemoteRequestsFit = {
  requestLatencySec: 0,
  requestsPerSample: 1,
  profiledInFlightPerWorker: null,
  remoteObjects: false,
};

/** L, r and q from the cold mode's network use; none for local files. */
export function fitRemoteRequests(
  profile: Profile,
  modes: MeasuredModes,
  ranks: number,
  workersPerRank: number | null,
): Fitted<RemoteRequestsFit> {
  const cold = modes.cold;
  const network = cold?.network;
  if (!profile.dataset.remote || !cold || !network || network.firstByteMs === null) {
    return {
      kind: 'fitted',
      value: { ...NONE, remoteObjects: profile.dataset.remote !== undefined },
      parameters: [],
      caveats: [],
    };
  }
  // On a saturated network a response's first byte waits behind other responses' bytes: that wait is the bandwidth
  // term's, not latency.
  const carried =
    profile.options.storageBwBytesPerSec ??
    (profile.storageProbe?.proven ? probeBandwidth(profile.storageProbe).bytesPerSec : null);
  const readRate = cold.storageReadBytesPerSec;
  const saturated = carried !== null && readRate !== null && readRate >= SATURATED_SHARE * carried;
  // Saturated: the latency is what the probe's requests sent one at a time waited (none in older profiles: 0).
  const idleMs = profile.storageProbe?.idleFirstByteMs;
  const loadedMs = network.firstByteMs.p50;
  const latency = saturated ? (idleMs ?? 0) / 1000 : loadedMs / 1000;
  const requestsPerSample = 1 / (profile.dataset.remote.samplesPerObject ?? 1);
  // The most at once: a worker's own concurrency (threads) shows when it was busy; the mean counts its idle moments
  // too.
  const loaders = ranks * Math.max(1, workersPerRank ?? 1);
  const inFlight = Math.max(1, Math.round(network.maxInFlight / loaders));
  const source = `modes.cold.network (${network.requests} requests ${network.meter === 'client' ? "counted in the job's HTTP clients" : 'through the metering proxy'})`;
  // L's row: the cold mode's own median, or on a saturated network the probe's idle wait (else assumed 0), saying why.
  const latencyParameter = (): ModelParameter => {
    const name = 'time from a request to its first byte (median)';
    if (!saturated) return parameter('L', name, latency, 's', `${source}: firstByteMs.p50`, proven(cold));
    const queued =
      `the cold mode read ${formatRate(readRate!)} of the ${formatRate(carried!)} the network ` +
      `carries, so its first bytes (median ${loadedMs.toFixed(1)} ms) waited behind other responses' bytes`;
    return idleMs !== undefined
      ? parameter(
          'L',
          name,
          latency,
          's',
          `storageProbe.idleFirstByteMs: requests sent one at a time; ${queued}`,
          profile.storageProbe!.proven,
        )
      : parameter('L', name, 0, 's', `assumed 0: ${queued}`, false, 'assumed: hidden by a saturated network');
  };
  return {
    kind: 'fitted',
    value: { requestLatencySec: latency, requestsPerSample, profiledInFlightPerWorker: inFlight, remoteObjects: true },
    parameters: [
      latencyParameter(),
      parameter(
        'r',
        'requests per sample',
        requestsPerSample,
        'requests',
        profile.dataset.remote.samplesPerObject
          ? 'dataset.remote.samplesPerObject (tar shards)'
          : 'one object per sample',
        true,
      ),
      parameter(
        'q',
        'requests in flight per loader worker',
        inFlight,
        'requests',
        `${source}: maxInFlight ${network.maxInFlight} over ${loaders} loaders`,
        proven(cold),
      ),
    ],
    caveats: [],
  };
}
