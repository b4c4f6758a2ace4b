// A write throttle for validate's --write-bw points: the job's writes held to a rate on every whole disk (where
// checkpoints land is not known), for one run. On cgroup v1 a buffered save to a new file is not held (the flusher
// threads write it outside the job's group); on v2 every write is.
import { createJobCgroup, detectCgroups, wrapCommand, type CgroupInfo } from './cgroups.js';
import { wholeDisks, type WholeDisk } from '../kernel/block-device.js';

/** A write throttle in place for one run. */
export interface WriteThrottle {
  /** The disks held, as 'name (major:minor)'. */
  devices: string[];
  /** The cgroup hierarchy the throttle is on: on v1 the kernel's background writeback is not held. */
  version: 'v1' | 'v2';
  /** The job's command, joining the throttled group first. */
  wrap(argv: string[]): string[];
  /** Removes the group once the job has left it. */
  remove(): Promise<void>;
}

/** Where the throttle reads the machine: the sysfs root and the detected cgroups (tests pass their own). */
export interface WriteThrottleSources {
  sysfs?: string;
  cgroups?: CgroupInfo;
}

function setup(env: NodeJS.ProcessEnv, sources: WriteThrottleSources): { cgroups: CgroupInfo; disks: WholeDisk[] } {
  return {
    cgroups: sources.cgroups ?? detectCgroups({ v2Parent: env.DSA_CGROUP_PARENT }),
    disks: wholeDisks(sources.sysfs),
  };
}

/** Why writes cannot be throttled here, or null when they can. */
export function writeThrottleObstacle(env: NodeJS.ProcessEnv, sources: WriteThrottleSources = {}): string | null {
  const { cgroups, disks } = setup(env, sources);
  const io = cgroups.controllers.io;
  if (!io.writable) return io.reason;
  if (disks.length === 0) return 'no disk in /sys/block to throttle (only loop, RAM or zram devices)';
  return null;
}

/** Holds every whole disk's writes to `bytesPerSec` for the jobs run through `wrap`; a UserError when not permitted. */
export function startWriteThrottle(
  bytesPerSec: number,
  name: string,
  env: NodeJS.ProcessEnv,
  sources: WriteThrottleSources = {},
): WriteThrottle {
  const { cgroups, disks } = setup(env, sources);
  const group = createJobCgroup({
    name,
    writeBpsDevices: { devices: disks.map((d) => d.device), bytesPerSec },
    v2Parent: env.DSA_CGROUP_PARENT,
    cgroups,
  });
  return {
    devices: disks.map((d) => `${d.name} (${d.device})`),
    version: cgroups.controllers.io.version === 'v2' ? 'v2' : 'v1',
    wrap: (argv) => wrapCommand(group.procsFiles, argv),
    remove: () => group.remove(),
  };
}
