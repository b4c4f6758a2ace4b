// What the summary says of remote data: where it came from, and what each
// mode fetched over the network as the metering proxy saw it.
import type { NetworkUse, Profile } from '../schema/profile.js';
import { MODES } from '../schema/events.js';
import { formatBytes, formatRate } from '../units.js';

export { fetchPlace } from '../analysis/fetch-place.js';

/** The remote data's origin and one line per mode that fetched, or the FUSE mount's daemon; empty for local files. */
export function networkLines(profile: Profile): string[] {
  const remote = profile.dataset.remote;
  const mount = profile.dataset.mount;
  if (mount)
    return [
      `mount: ${mount.source} at ${mount.mountPoint} (${mount.type}), read ` +
        `by ${mount.daemon.program} (pid ${mount.daemon.pid}); network bytes counted at its sockets`,
    ];
  if (!remote) return [];
  const clientMetered = MODES.some((mode) => profile.modes[mode]?.network?.meter === 'client');
  const how = `through the metering proxy${remote.protocol === 'https' ? ': tunnels, counted in bytes' : ''}${clientMetered ? "; the cold mode direct, counted in the job's HTTP clients" : ''}`;
  const lines = [`remote: ${remote.location} (${remote.protocol}, ${how})`];
  for (const mode of MODES) {
    const network = profile.modes[mode]?.network;
    if (network) lines.push(`  ${mode.padEnd(9)} ${networkLine(network)}`);
  }
  return lines;
}

function networkLine(n: NetworkUse): string {
  const parts = [
    `${formatBytes(n.originBytes)} from the origin`,
    n.cacheBytes > 0 ? `${formatBytes(n.cacheBytes)} from the profiler's cache` : null,
    n.tunnels > 0 ? `${n.tunnels} tunnels` : `${n.requests} requests`,
    n.firstByteMs
      ? `first byte p50 ${n.firstByteMs.p50.toFixed(1)} / p95 ${n.firstByteMs.p95.toFixed(1)} / ` +
        `p99 ${n.firstByteMs.p99.toFixed(1)} ms`
      : null,
    `${n.meanInFlight.toFixed(1)} in flight (max ${n.maxInFlight})`,
    n.capBytesPerSec !== null ? `capped at ${formatRate(n.capBytesPerSec)}` : null,
    troubles(n),
  ];
  return parts.filter(Boolean).join(' · ');
}

/** Error statuses and failed connections: the job may have retried or failed on them. */
function troubles(n: NetworkUse): string | null {
  const errors = Object.entries(n.statuses)
    .filter(([status]) => Number(status) >= 400)
    .map(([status, count]) => `${count}x HTTP ${status}`);
  if (n.failures > 0)
    errors.push(
      n.meter === 'client'
        ? `${n.failures} failed requests`
        : `${n.failures} failed connections (last: ${n.lastFailure})`,
    );
  return errors.length > 0 ? `ERRORS: ${errors.join(', ')}` : null;
}
