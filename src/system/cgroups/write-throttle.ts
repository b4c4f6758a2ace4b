// A write throttle for validate's --write-bw points: the job's writes to
// storage held to a rate (blkio.throttle.write_bps_device on cgroup v1,
// io.max wbps on v2), set up for one run and removed after it.
//
// Which disks: all of them. The profile does not record where the job saves
// its checkpoints (paths are kept out of it), and a checkpoint often goes to
// another disk than the data or the working folder (a /checkpoints volume);
// holding every whole disk at the rate holds the saves wherever they land.
// What else the job writes (its logs, the hook's events) is small beside a
// checkpoint, and reads are not held at all.
//
// What the throttle holds (measured here, cgroup v1, ext4, 32 MiB a save
// every 250 ms at 40 MB/s): a save synced with fsync blocks for bytes / rate
// (855 ms); a buffered save over the previous file is held too (about 580 ms
// a save), because ext4 starts writing a truncated file back when it is
// closed, from the job's own process (auto_da_alloc), and the next truncate
// waits for that; a buffered save to a new file is not held (25-135 ms),
// because on v1 the kernel's flusher threads write it back outside the job's
// group. On v2, writeback is charged to the group that dirtied the pages, so
// all of them are held (Documentation/admin-guide/cgroup-v2.rst, "Writeback").
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

/**
 * Holds every whole disk's writes to `bytesPerSec` for the jobs run through `wrap`; a UserError (Environment) when not
 * permitted.
 */
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
