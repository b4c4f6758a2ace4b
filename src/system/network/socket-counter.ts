// The kernel's count of the bytes the sockets of one cgroup receive (an nftables `socket cgroupv2` counter, Linux
// 5.13): the meter for traffic a proxy cannot reach (a FUSE daemon) or carry. Payload: the IP bytes less HEADER_BYTES a
// packet.
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { execa, execaSync } from 'execa';
import { parseMountinfo } from '../kernel/mountinfo.js';
import { readTextOrNull } from '../kernel/read-text.js';
import { parseProcCgroup } from '../cgroups/cgroups.js';

/** Where nftables resolves `socket cgroupv2` paths (it prepends this to the path it is given). */
const NFT_CGROUP_ROOT = '/sys/fs/cgroup';
// IPv4 + TCP with the timestamp option, the Linux default: what one packet adds to its payload.
const HEADER_BYTES = 52;
const TABLE_PREFIX = 'ds_analyzer_';

/** A cgroup v2 group, named as nftables needs it. */
export interface CgroupV2Group {
  /** The group's path in the v2 hierarchy ('/system.slice/rclone.service'). */
  path: string;
  /** Its directory. */
  dir: string;
  /** The path nftables is given (relative to /sys/fs/cgroup). */
  nftPath: string;
  /** Its depth in the v2 hierarchy (the root is 0). */
  level: number;
}

/** One reading of the counter. */
export interface SocketReading {
  /** IP-layer bytes of the packets counted. */
  bytes: number;
  /** Packets counted. */
  packets: number;
  /** Payload bytes: bytes less each packet's headers. */
  payloadBytes: number;
}

const MESSAGES = {
  notRoot: "counting a cgroup's socket bytes needs root (nftables)",
  noNft: 'nftables is not installed (apt-get install nftables)',
  noV2: 'no cgroup v2 hierarchy under /sys/fs/cgroup (nftables matches sockets by their v2 group)',
  nftFailed: (what: string, stderr: string) => `nft could not ${what}: ${stderr.trim().split('\n')[0] ?? 'no message'}`,
} as const;

/** The mount point of the cgroup v2 hierarchy, or null when there is none. */
export function cgroupV2Mount(mountinfo = readTextOrNull('/proc/self/mountinfo') ?? ''): string | null {
  return parseMountinfo(mountinfo).find((m) => m.type === 'cgroup2')?.mountPoint ?? null;
}

/** The v2 group of a process, or null when it has none (or is gone). */
export function cgroupV2Of(pid: number, v2Mount = cgroupV2Mount()): CgroupV2Group | null {
  const text = readTextOrNull(`/proc/${pid}/cgroup`);
  if (text === null || v2Mount === null) return null;
  const path = parseProcCgroup(text).get('');
  if (path === undefined) return null;
  return groupAt(path, v2Mount);
}

/** The group at `path` of the v2 hierarchy mounted at `v2Mount`. */
export function groupAt(path: string, v2Mount: string): CgroupV2Group {
  const dir = join(v2Mount, path);
  const level = path.split('/').filter(Boolean).length;
  return { path, dir, nftPath: relative(NFT_CGROUP_ROOT, dir) || '.', level };
}

/** The processes in a group (its cgroup.procs), empty when it cannot be read. */
export function groupProcesses(group: CgroupV2Group): number[] {
  return (readTextOrNull(join(group.dir, 'cgroup.procs')) ?? '').split('\n').filter(Boolean).map(Number);
}

/** Why socket bytes cannot be counted here, or null when they can. */
export function socketCounterObstacle(): string | null {
  if (process.getuid?.() !== 0) return MESSAGES.notRoot;
  const v2 = cgroupV2Mount();
  if (v2 === null || !v2.startsWith(NFT_CGROUP_ROOT)) return MESSAGES.noV2;
  const probe = execaSync('nft', ['--version'], { reject: false });
  if (probe.exitCode !== 0) return MESSAGES.noNft;
  return null;
}

/** The table's rules: every packet received by a socket of one of the groups, counted once. */
function tableRules(table: string, groups: readonly CgroupV2Group[]): string {
  // One rule per group, each ending the chain for its packets, so a packet of nested groups counts once.
  const rules = groups
    .map((g) => `    socket cgroupv2 level ${g.level} ${JSON.stringify(g.nftPath)} counter name "rx" accept`)
    .join('\n');
  return (
    `table inet ${table} {\n  counter rx {\n  }\n  chain input {\n    type filter hook input priority -150; ` +
    `policy accept;\n${rules}\n  }\n}\n`
  );
}

let tables = 0;

/** Counts the bytes the sockets of some cgroups receive, read through one `nft -j -i` kept open (6 ms a spawn). */
export class SocketCounter {
  private closed = false;
  private readonly waiting: Array<(line: string) => void> = [];

  private constructor(
    readonly table: string,
    readonly groups: readonly CgroupV2Group[],
    private readonly nft: ChildProcessWithoutNullStreams,
  ) {
    createInterface({ input: nft.stdout }).on('line', (line) => this.waiting.shift()?.(line));
    // A reader left waiting when nft ends gets an answer that fails to parse, not a hang.
    nft.on('exit', () => {
      for (const answer of this.waiting.splice(0)) answer('{}');
    });
  }

  /** The pid of the nft process that answers the readings (the benchmark counts its CPU). */
  get readerPid(): number | undefined {
    return this.nft.pid;
  }

  /** Adds the table (after removing tables a profiler that died left behind). */
  static async start(groups: readonly CgroupV2Group[]): Promise<SocketCounter> {
    await removeStaleTables();
    const table = `${TABLE_PREFIX}${process.pid}_${tables++}`;
    const added = await execa('nft', ['-f', '-'], { input: tableRules(table, groups), reject: false });
    if (added.exitCode !== 0) throw new Error(MESSAGES.nftFailed('add its counting table', String(added.stderr)));
    const nft = spawn('nft', ['-j', '-i'], { stdio: 'pipe' });
    nft.on('error', () => undefined); // reported by the reading that finds it gone
    return new SocketCounter(table, groups, nft);
  }

  /** The counter now. */
  read(): Promise<SocketReading> {
    if (this.closed || this.nft.exitCode !== null)
      return Promise.reject(new Error(MESSAGES.nftFailed('read its counter', 'the counter is closed')));
    return new Promise((resolve, reject) => {
      this.waiting.push((line) => {
        try {
          resolve(parseCounter(line));
        } catch (error) {
          reject(new Error(MESSAGES.nftFailed('read its counter', String(error))));
        }
      });
      this.nft.stdin.write(`list counter inet ${this.table} rx\n`);
    });
  }

  /** The counter now, read before returning (a run's baseline, taken before its job starts). */
  readNow(): SocketReading {
    const listed = execaSync('nft', ['-j', 'list', 'counter', 'inet', this.table, 'rx'], { reject: false });
    if (listed.exitCode !== 0) throw new Error(MESSAGES.nftFailed('read its counter', String(listed.stderr)));
    return parseCounter(String(listed.stdout));
  }

  /** Removes the table; safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.nft.stdin.end();
    this.nft.kill();
    await execa('nft', ['delete', 'table', 'inet', this.table], { reject: false });
  }
}

/** A reading from `nft -j list counter`'s output. */
export function parseCounter(json: string): SocketReading {
  const objects =
    (JSON.parse(json) as { nftables?: Array<{ counter?: { bytes: number; packets: number } }> }).nftables ?? [];
  const counter = objects.find((o) => o.counter)?.counter;
  if (!counter) throw new Error('nft listed no counter');
  return {
    bytes: counter.bytes,
    packets: counter.packets,
    payloadBytes: Math.max(0, counter.bytes - counter.packets * HEADER_BYTES),
  };
}

/** Removes the tables of profilers that are gone (a kill -9 leaves its table behind). */
async function removeStaleTables(): Promise<void> {
  const listed = await execa('nft', ['list', 'tables', 'inet'], { reject: false });
  if (listed.exitCode !== 0) return;
  for (const match of String(listed.stdout).matchAll(new RegExp(`table inet (${TABLE_PREFIX}(\\d+)_\\d+)`, 'g'))) {
    if (!existsSync(`/proc/${match[2]}`)) await execa('nft', ['delete', 'table', 'inet', match[1]], { reject: false });
  }
}
