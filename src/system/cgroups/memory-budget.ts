// The memory the page cache can give the job's dataset: the machine's available memory, or less under the tightest
// limit of the memory cgroups the job inherits (a container, a Slurm job).
import { meminfoBytes, parseKernelNumber, readTextOrNull } from '../kernel/read-text.js';
import { parseMountinfo, type Mount } from '../kernel/mountinfo.js';
import { parseProcCgroup } from './cgroups.js';
import { formatBytes } from '../../units.js';

/** Reads a kernel file as text, or null when it cannot be read; tests pass a fake file system. */
export type ReadKernelFile = (path: string) => string | null;

/** One memory cgroup level that has a limit. */
export interface CgroupMemoryLimit {
  /** 'v1' or 'v2'. */
  version: 'v1' | 'v2';
  /** The group's directory. */
  dir: string;
  /** The limit, bytes (v2: the lower of memory.max and memory.high). */
  limitBytes: number;
  /** Memory charged to the group (and its descendants), bytes. */
  usageBytes: number;
  /** Of that, file pages the kernel can reclaim for new cache pages, bytes. */
  fileBytes: number;
  /** What a dataset can take: limit - usage + file pages, at least 0, bytes. */
  headroomBytes: number;
}

/** The page cache a dataset can count on, and where that figure came from. */
export interface JobMemoryBudget {
  /** Bytes; null when neither /proc/meminfo nor a cgroup limit could be read. */
  bytes: number | null;
  /** One line naming the figure's source (MemAvailable, or the cgroup that limits it). */
  source: string;
  /** The tightest cgroup level, when one is limited. */
  cgroup: CgroupMemoryLimit | null;
}

// The share of a cgroup's headroom the dataset may take: the rest is the job's own, under the same limit.
const CGROUP_HEADROOM = 0.9;
// v1 reports "no limit" as PAGE_COUNTER_MAX rounded down to a page (9223372036854771712); anything this large is none.
const UNLIMITED_BYTES = 2 ** 62;

/** min(meminfoBudgetBytes (dataset.ts memoryBudget), 90% of the tightest headroom of this process's memory cgroups). */
export function jobMemoryBudget(
  meminfoBudgetBytes: number | null,
  readFile: ReadKernelFile = readTextOrNull,
): JobMemoryBudget {
  const tightest = tightestLimit(readFile);
  const cgroupBytes = tightest === null ? null : Math.floor(tightest.headroomBytes * CGROUP_HEADROOM);
  if (cgroupBytes !== null && (meminfoBudgetBytes === null || cgroupBytes < meminfoBudgetBytes)) {
    return {
      bytes: cgroupBytes,
      source:
        `90% of the headroom of memory cgroup ${tightest!.dir} (${tightest!.version}: ` +
        `limit ${formatBytes(tightest!.limitBytes, 2)}, ${formatBytes(tightest!.usageBytes - tightest!.fileBytes, 2)} in use besides reclaimable file pages)`,
      cgroup: tightest,
    };
  }
  return {
    bytes: meminfoBudgetBytes,
    source: meminfoBudgetBytes === null ? '/proc/meminfo could not be read' : '90% of MemAvailable (/proc/meminfo)',
    cgroup: tightest,
  };
}

/** The limited level with the least headroom, or null: the one whose reclaim a dataset meets first. */
function tightestLimit(readFile: ReadKernelFile): CgroupMemoryLimit | null {
  return cgroupMemoryLimits(readFile).reduce<CgroupMemoryLimit | null>(
    (best, l) => (best === null || l.headroomBytes < best.headroomBytes ? l : best),
    null,
  );
}

/** Every limited level of this process's memory cgroup, the group first, then its ancestors. */
export function cgroupMemoryLimits(readFile: ReadKernelFile = readTextOrNull): CgroupMemoryLimit[] {
  const groups = parseProcCgroup(readFile('/proc/self/cgroup') ?? '');
  const mounts = parseMountinfo(readFile('/proc/self/mountinfo') ?? '');
  const limits: CgroupMemoryLimit[] = [];
  // The v1 memory hierarchy's group first, then the v2 group, as /proc/self/cgroup lists them.
  for (const v1 of [true, false]) {
    const groupPath = groups.get(v1 ? 'memory' : '');
    if (groupPath === undefined) continue;
    const mount = mounts.find((m) =>
      v1 ? m.type === 'cgroup' && m.superOptions.includes('memory') : m.type === 'cgroup2',
    );
    if (!mount) continue;
    for (const dir of groupDirs(mount, groupPath)) {
      const limit = v1 ? v1Limit(readFile, dir) : v2Limit(readFile, dir);
      if (limit) limits.push(limit);
    }
  }
  return limits;
}

/** The group's directory and its ancestors' up to the mount point (a sub-tree's mount shows those below its root). */
function groupDirs(mount: Mount, groupPath: string): string[] {
  let relative = groupPath;
  if (mount.root !== '/' && (relative === mount.root || relative.startsWith(`${mount.root}/`)))
    relative = relative.slice(mount.root.length);
  const parts = relative.split('/').filter(Boolean);
  const dirs: string[] = [];
  for (let n = parts.length; n >= 0; n--)
    dirs.push([mount.mountPoint.replace(/\/$/, ''), ...parts.slice(0, n)].join('/') || '/');
  return dirs;
}

/** A cgroup memory file's bytes; v2's 'max' (no limit) is Infinity. */
function bytesIn(text: string | null): number | null {
  return text?.trim() === 'max' ? Infinity : parseKernelNumber(text);
}

function statField(text: string | null, name: string): number {
  const match = text === null ? null : new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
  return match ? Number(match[1]) : 0;
}

function limitOf(
  version: 'v1' | 'v2',
  dir: string,
  limitBytes: number | null,
  usageBytes: number | null,
  fileBytes: number,
): CgroupMemoryLimit | null {
  if (limitBytes === null || usageBytes === null || !(limitBytes < UNLIMITED_BYTES)) return null;
  const file = Math.min(fileBytes, usageBytes);
  return {
    version,
    dir,
    limitBytes,
    usageBytes,
    fileBytes: file,
    headroomBytes: Math.max(0, Math.min(limitBytes, limitBytes - usageBytes + file)),
  };
}

function v1Limit(readFile: ReadKernelFile, dir: string): CgroupMemoryLimit | null {
  const stat = readFile(`${dir}/memory.stat`);
  // total_*: the group and its descendants (hierarchical), as usage_in_bytes is.
  const file = statField(stat, 'total_inactive_file') + statField(stat, 'total_active_file');
  return limitOf(
    'v1',
    dir,
    bytesIn(readFile(`${dir}/memory.limit_in_bytes`)),
    bytesIn(readFile(`${dir}/memory.usage_in_bytes`)),
    file,
  );
}

function v2Limit(readFile: ReadKernelFile, dir: string): CgroupMemoryLimit | null {
  const max = bytesIn(readFile(`${dir}/memory.max`));
  const high = bytesIn(readFile(`${dir}/memory.high`));
  // memory.high throttles and reclaims above it: the cache cannot grow past it either.
  const limit = max === null && high === null ? null : Math.min(max ?? Infinity, high ?? Infinity);
  return limitOf(
    'v2',
    dir,
    limit,
    bytesIn(readFile(`${dir}/memory.current`)),
    statField(readFile(`${dir}/memory.stat`), 'file'),
  );
}

/** Active file pages where the dataset's will compete: the tightest limiting cgroup's, else the machine's. */
export function activeFileBytes(readFile: ReadKernelFile = readTextOrNull): { bytes: number; source: string } | null {
  const tightest = tightestLimit(readFile);
  if (tightest) {
    const stat = readFile(`${tightest.dir}/memory.stat`);
    const bytes = statField(stat, tightest.version === 'v1' ? 'total_active_file' : 'active_file');
    return {
      bytes,
      source: `memory cgroup ${tightest.dir} (${tightest.version}) memory.stat ${tightest.version === 'v1' ? 'total_active_file' : 'active_file'}`,
    };
  }
  const bytes = meminfoBytes(readFile('/proc/meminfo'), 'Active(file)');
  return bytes === null ? null : { bytes, source: '/proc/meminfo Active(file)' };
}
