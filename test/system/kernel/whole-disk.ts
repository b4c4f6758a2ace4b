// The whole disk under a path, found another way than src/system/kernel/block-device.ts
// (which reads stat's st_dev and follows /sys/dev/block): the mount holding
// the path in /proc/self/mountinfo names its device's major:minor
// (proc(5), field 3), and /sys/block lists the whole disks, each with its
// partitions as sub-folders (Documentation/ABI/stable/sysfs-block).
import fs from 'node:fs';
import path from 'node:path';

/**
 * The expected 'major:minor' of the whole disk under `target`, or why this machine has none to expect (a reason for
 * t.skip).
 */
export type ExpectedDisk = { device: string } | { skip: string };

/** mountinfo escapes space, tab, newline and backslash as \ooo octal. */
function unescapeMountField(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/**
 * The mount holding `resolved` (the longest mount point above it; of equal ones the last, which shadows the others), as
 * [major:minor, type, mount point].
 */
function mountOfPath(resolved: string, mountinfo: string): [string, string, string] | null {
  let best: [string, string, string] | null = null;
  for (const line of mountinfo.split('\n')) {
    const fields = line.split(' ');
    const dash = fields.indexOf('-');
    if (dash < 6) continue;
    const point = unescapeMountField(fields[4]);
    const inside = point === '/' || resolved === point || resolved.startsWith(`${point}/`);
    if (inside && (best === null || point.length >= best[2].length)) best = [fields[2], fields[dash + 1], point];
  }
  return best;
}

function readDev(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return null;
  }
}

/** The whole disk /sys/block lists for `majorMinor`: the disk itself, or the disk whose partition it is. */
function diskInSysBlock(majorMinor: string, sysBlock: string): string | null {
  for (const disk of fs.readdirSync(sysBlock)) {
    const diskDev = readDev(path.join(sysBlock, disk, 'dev'));
    if (diskDev === majorMinor) return diskDev;
    for (const entry of fs.readdirSync(path.join(sysBlock, disk))) {
      if (entry.startsWith(disk) && readDev(path.join(sysBlock, disk, entry, 'dev')) === majorMinor) return diskDev;
    }
  }
  return null;
}

/** What wholeDiskDevice(target) must answer on this machine, or why there is nothing to expect. */
export function expectedWholeDisk(target: string): ExpectedDisk {
  const resolved = fs.realpathSync(target);
  const mount = mountOfPath(resolved, fs.readFileSync('/proc/self/mountinfo', 'utf8'));
  if (mount === null) return { skip: `no mount in /proc/self/mountinfo holds ${resolved}` };
  const [majorMinor, type, point] = mount;
  // Major 0: an anonymous device (tmpfs, overlay, NFS, a btrfs subvolume), no block device.
  if (majorMinor.startsWith('0:'))
    return { skip: `${resolved} is on ${type} at ${point} (device ${majorMinor}), which has no block device` };
  if (!fs.existsSync('/sys/block')) return { skip: 'no /sys/block here (sysfs not mounted)' };
  const disk = diskInSysBlock(majorMinor, '/sys/block');
  return disk === null
    ? { skip: `/sys/block lists no disk for ${majorMinor} (the ${type} mount at ${point})` }
    : { device: disk };
}
