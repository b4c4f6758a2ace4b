// The daemon behind a FUSE mount: the process holding /dev/fuse open that names the mount point on its command line
// (rclone mount, s3fs, mount-s3, gcsfuse); one that cannot be told apart leaves the mount unmetered, with why.
import { readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { listPids } from '../kernel/proc.js';
import { readTextOrNull } from '../kernel/read-text.js';

/** A process serving FUSE requests. */
export interface FuseDaemon {
  pid: number;
  /** Its command line. */
  argv: string[];
}

/** Processes holding /dev/fuse open, with their command lines. */
export function fuseDaemons(procRoot = '/proc'): FuseDaemon[] {
  const daemons: FuseDaemon[] = [];
  for (const pid of listPids(procRoot)) {
    const dir = join(procRoot, String(pid));
    const cmdline = holdsDevFuse(join(dir, 'fd')) ? readTextOrNull(join(dir, 'cmdline')) : null;
    if (cmdline !== null) daemons.push({ pid, argv: cmdline.split('\0').filter(Boolean) });
  }
  return daemons;
}

function holdsDevFuse(fdDir: string): boolean {
  let fds: string[];
  try {
    fds = readdirSync(fdDir);
  } catch {
    return false; // gone, or not ours to read
  }
  return fds.some((fd) => {
    try {
      return readlinkSync(join(fdDir, fd)) === '/dev/fuse';
    } catch {
      return false;
    }
  });
}

/** The daemons among `daemons` that name `mountPoint` on their command line (resolved through symlinks). */
export function daemonsOf(mountPoint: string, daemons: readonly FuseDaemon[]): FuseDaemon[] {
  return daemons.filter((d) => d.argv.slice(1).some((arg) => samePath(arg, mountPoint)));
}

function samePath(arg: string, mountPoint: string): boolean {
  if (!arg.startsWith('/') && !arg.startsWith('.')) return false;
  try {
    return realpathSync(arg) === mountPoint || arg.replace(/\/+$/, '') === mountPoint;
  } catch {
    return arg.replace(/\/+$/, '') === mountPoint;
  }
}
