// The meter of files on a FUSE mount (fuse-files.ts): finds the mount's daemon and counts the bytes its sockets receive
// in the kernel (system/network/socket-counter.ts), the fetch meter the modes' proofs read.
import { basename } from 'node:path';
import type { Profile } from '../../schema/profile.js';
import type { RootFileSystem } from '../../system/dataset/file-systems.js';
import { daemonsOf, fuseDaemons, type FuseDaemon } from '../../system/dataset/fuse-daemon.js';
import {
  cgroupV2Of,
  groupProcesses,
  socketCounterObstacle,
  type CgroupV2Group,
  type SocketCounter,
} from '../../system/network/socket-counter.js';
import { counterMeter } from './counter-poll.js';
import type { FetchMeter } from './fetch-meter.js';
import type { CpuLedger } from '../../system/kernel/cpu-ledger.js';

const READ_EVERY_MS = 500;

/** The profile's record of the mount. */
export type MountRecord = NonNullable<Profile['dataset']['mount']>;

/** A FUSE mount whose daemon can be metered: the daemon's cgroup, whose sockets' bytes are counted once listed. */
export interface FuseMount {
  group: CgroupV2Group;
  record: MountRecord;
}

const MESSAGES = {
  mixed:
    'the --data roots mix a FUSE mount with other file systems, whose reads one meter cannot tell apart: profile ' +
    'them apart',
  several: 'the --data roots are on more than one FUSE mount: profile one mount at a time',
  noDaemon: (fsys: RootFileSystem) =>
    `no process holding /dev/fuse names ${fsys.mountPoint} on its command line, so the daemon serving it is not known`,
  ambiguous: (fsys: RootFileSystem, daemons: readonly FuseDaemon[]) =>
    `${daemons.length} processes may serve ${fsys.mountPoint} (pids ${daemons.map((d) => d.pid).join(', ')}): the daemon is not known`,
  noGroup: (pid: number) => `the cgroup v2 group of the FUSE daemon (pid ${pid}) could not be read`,
  seriesSource: (record: MountRecord) =>
    `bytes the FUSE daemon (${record.daemon.program}, pid ${record.daemon.pid}) received over its sockets ` +
    `(nftables counter on cgroup ${record.daemon.cgroup}, sampled)`,
  wholeRunSource: (record: MountRecord) =>
    `bytes the FUSE daemon (${record.daemon.program}) received over its sockets over the whole run`,
  rootGroup: (pid: number) =>
    `the FUSE daemon (pid ${pid}) runs in the root cgroup with every process, so its sockets cannot be told ` +
    `apart: start it in a group of its own (systemd-run --scope, or a systemd mount unit)`,
} as const;

/** The mount under FUSE roots whose daemon can be metered, or why it cannot (asked once, as the source is opened). */
export function fuseMount(fileSystems: readonly RootFileSystem[]): FuseMount | { obstacle: string } {
  const fuse = fileSystems.filter((f) => f.kind === 'fuse');
  if (fuse.length === 0 || fuse.length < fileSystems.length) return { obstacle: MESSAGES.mixed };
  if (new Set(fuse.map((f) => f.mountPoint)).size > 1) return { obstacle: MESSAGES.several };
  const obstacle = socketCounterObstacle();
  if (obstacle) return { obstacle };
  const fsys = fuse[0];
  const found = daemonOf(fsys);
  if ('obstacle' in found) return found;
  const group = cgroupV2Of(found.pid);
  if (!group) return { obstacle: MESSAGES.noGroup(found.pid) };
  // A socket keeps the group it was created in, so a daemon moved now would keep its open connections uncounted.
  if (group.level === 0) return { obstacle: MESSAGES.rootGroup(found.pid) };
  const record: MountRecord = {
    type: fsys.type,
    source: withoutCredentials(fsys.source),
    mountPoint: fsys.mountPoint,
    daemon: {
      program: basename(found.argv[0] ?? 'unknown'),
      pid: found.pid,
      cgroup: group.path,
      otherProcesses: Math.max(0, groupProcesses(group).length - 1),
    },
  };
  return { group, record };
}

/** The mount's daemon: the one holding /dev/fuse that names its mount point, else the only one of its program. */
function daemonOf(fsys: RootFileSystem): FuseDaemon | { obstacle: string } {
  const all = fuseDaemons();
  let candidates = daemonsOf(fsys.mountPoint, all);
  if (candidates.length === 0) {
    // A daemon started with a relative mount point: fuse.s3fs is served by s3fs, fuse.rclone by rclone.
    const program = fsys.type.startsWith('fuse.') ? fsys.type.slice('fuse.'.length) : null;
    candidates = program ? all.filter((d) => basename(d.argv[0] ?? '') === program) : [];
  }
  if (candidates.length === 0) return { obstacle: MESSAGES.noDaemon(fsys) };
  if (candidates.length > 1) return { obstacle: MESSAGES.ambiguous(fsys, candidates) };
  return candidates[0];
}

/** A mount source without a user:password@ part. */
export function withoutCredentials(source: string): string {
  return source.replace(/[^\s/@]*:[^\s/@]*@/g, '');
}

/** Meters one run: the daemon's received bytes, read every half second; each reading charged to `ledger`. */
export function startSocketMeter(counter: SocketCounter, record: MountRecord, ledger?: CpuLedger): FetchMeter {
  const start = counter.readNow().payloadBytes;
  // Reads of the kernel's counter are asynchronous: each waits for the one before, so the readings stay in order.
  let reading: Promise<void> = Promise.resolve();
  return counterMeter(
    (poll) =>
      (reading = reading.then(async () => {
        const now = await counter.read().catch(() => null);
        // Payload is estimated from packet counts (socket-counter.ts): a window of short packets can take the estimate
        // back a little, where the bytes received never go back.
        if (now) poll.push(Math.max(poll.lastBytes, now.payloadBytes - start));
      })),
    READ_EVERY_MS,
    ledger,
    () => ({ seriesSource: MESSAGES.seriesSource(record), wholeRunSource: MESSAGES.wholeRunSource(record) }),
  );
}
