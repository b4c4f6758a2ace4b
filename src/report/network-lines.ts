// What the summary says of remote data: where it came from, and what each mode fetched over the network as the metering
// proxy saw it.
import type { NetworkUse, Profile } from '../schema/profile.js';
import { MODES } from '../schema/events.js';
import { formatBytes, formatRate } from '../units.js';

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
  const how = meteredHow(profile, remote.protocol);
  const lines = [`remote: ${remote.location} (${remote.protocol}, ${how})`];
  for (const mode of MODES) {
    const network = profile.modes[mode]?.network;
    if (network) lines.push(`  ${mode.padEnd(9)} ${networkLine(network)}`);
  }
  return lines;
}

/** Where the modes' requests were counted: in the job's own clients, through the proxy, or some of each. */
function meteredHow(profile: Profile, protocol: string): string {
  const meters = MODES.flatMap((mode) => {
    const meter = profile.modes[mode]?.network?.meter;
    return meter ? [{ mode, meter }] : [];
  });
  const proxy = `through the metering proxy${protocol === 'https' ? ': tunnels, counted in bytes' : ''}`;
  const client = "direct, counted in the job's HTTP clients";
  const direct = meters.filter((m) => m.meter === 'client').map((m) => m.mode);
  if (direct.length === 0) return proxy;
  if (direct.length === meters.length)
    return `${client}${profile.modes.cached?.network?.meter === 'client' ? "; the cached mode answered in the job from the profiler's copy" : ''}`;
  return `${proxy}; ${direct.join(' and ')} ${client}`;
}

function networkLine(n: NetworkUse): string {
  const parts = [
    `${formatBytes(n.originBytes)} from the origin`,
    n.cacheBytes > 0
      ? `${formatBytes(n.cacheBytes)} from the profiler's ${n.meter === 'client' ? 'copy, answered in the job' : 'cache'}`
      : null,
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
