// The block device under a path, as storage throttles (blkio, io.max) and
// /proc/diskstats name it: 'major:minor' of the whole disk.
import fs from 'node:fs';
import path from 'node:path';

/** 'major:minor' of the whole disk holding `target`; null without a block device (tmpfs, overlay, NFS). */
export async function wholeDiskDevice(target: string, sysfs = '/sys'): Promise<string | null> {
  let dev: bigint;
  try {
    dev = (await fs.promises.stat(target, { bigint: true })).dev;
  } catch {
    return null;
  }
  const { major, minor } = splitDev(dev);
  const node = `${sysfs}/dev/block/${major}:${minor}`;
  try {
    // realpath first: path.join would resolve the symlink's '..' lexically, in /sys/dev/block.
    const real = await fs.promises.realpath(node);
    const isPartition = await fs.promises.access(path.join(real, 'partition')).then(
      () => true,
      () => false,
    );
    if (!isPartition) return `${major}:${minor}`;
    const parent = (await fs.promises.readFile(path.join(path.dirname(real), 'dev'), 'utf8')).trim();
    return /^\d+:\d+$/.test(parent) ? parent : `${major}:${minor}`;
  } catch {
    return null;
  }
}

/** Splits a Linux dev_t into major and minor (glibc's gnu_dev_major/minor encoding). */
export function splitDev(dev: bigint): { major: number; minor: number } {
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
  return { major: Number(major), minor: Number(minor) };
}

/** A whole disk as /sys/block lists it. */
export interface WholeDisk {
  /** Its kernel name (vda, nvme0n1, dm-0). */
  name: string;
  /** 'major:minor', as throttles name it. */
  device: string;
}

// /sys/block entries that hold no storage a job writes to: loop, RAM, zram, optical and floppy devices.
const NOT_STORAGE = /^(loop|ram|zram|sr|fd)\d*/;

/** Every whole disk but NOT_STORAGE; device-mapper disks stay (a throttle on both holds a write once). */
export function wholeDisks(sysfs = '/sys'): WholeDisk[] {
  let names: string[];
  try {
    names = fs.readdirSync(`${sysfs}/block`);
  } catch {
    return [];
  }
  const disks: WholeDisk[] = [];
  for (const name of names.sort()) {
    if (NOT_STORAGE.test(name)) continue;
    try {
      const device = fs.readFileSync(`${sysfs}/block/${name}/dev`, 'utf8').trim();
      if (/^\d+:\d+$/.test(device)) disks.push({ name, device });
    } catch {
      // Gone, or no dev file: nothing to throttle.
    }
  }
  return disks;
}
