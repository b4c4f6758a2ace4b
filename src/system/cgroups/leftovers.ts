// The job cgroups a SIGKILLed CLI left behind (createJobCgroup's ds-analyzer-<name>), found, emptied and removed by
// `ds-analyzer clean` through CgroupFs, with a deterministic fake beside it (test/support/fake-cgroup-fs.ts).
import { readdirSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { errorCode } from '../kernel/errno.js';
import { readTextOrNull } from '../kernel/read-text.js';

/** What clean does to cgroups and processes: the real one on cgroupfs and /proc, a fake in tests. */
export interface CgroupFs {
  /** Names of the sub-groups of `dir` (empty when it cannot be read). */
  children(dir: string): string[];
  /** The pids in a group's cgroup.procs; null when the group is gone. */
  procs(dir: string): number[] | null;
  /** Removes an empty group; the errno code when the kernel refuses (EBUSY: not empty yet). */
  remove(dir: string): string | null;
  /** Sends SIGKILL to one process; false when it is gone or not ours to signal. */
  kill(pid: number): boolean;
  /** A process's command line, spaces between its arguments; null when it is gone. */
  command(pid: number): string | null;
}

/** A ds-analyzer-* group found under a cgroup root. */
export interface LeftoverCgroup {
  /** The group's directory. */
  dir: string;
  /** The CLI that made it (the pid in its name); null where the name holds none. */
  ownerPid: number | null;
  /** True when that pid still runs: the group may be in use, and is left alone. */
  inUse: boolean;
  /** The command of the live owner; null when it is gone. */
  ownerCommand: string | null;
  /** The processes still inside it. */
  pids: number[];
}

/** The real CgroupFs: cgroupfs directories and /proc. */
export const realCgroupFs: CgroupFs = {
  children(dir) {
    try {
      return readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name);
    } catch {
      return [];
    }
  },
  procs(dir) {
    const text = readTextOrNull(join(dir, 'cgroup.procs'));
    return text === null ? null : parsePids(text);
  },
  remove(dir) {
    try {
      rmdirSync(dir);
      return null;
    } catch (error) {
      return errorCode(error) === 'ENOENT' ? null : errorCode(error);
    }
  },
  kill(pid) {
    try {
      process.kill(pid, 'SIGKILL');
      return true;
    } catch {
      return false;
    }
  },
  command(pid) {
    const text = readTextOrNull(`/proc/${pid}/cmdline`);
    return text === null ? null : text.split('\0').filter(Boolean).join(' ');
  },
};

/** The pids of a cgroup.procs text, one a line. */
export function parsePids(text: string): number[] {
  return text
    .split('\n')
    .map((line) => Number(line.trim()))
    .filter((pid) => Number.isInteger(pid) && pid > 0);
}

/** The start of every job group's name (ds-analyzer-<name>): how clean tells them from others. */
export const JOB_CGROUP_PREFIX = 'ds-analyzer-';

/** The pid in a job group's name: ds-analyzer-1234, ds-analyzer-validate-1234-bw-2, ds-analyzer-doctor-1234. */
export function ownerPidOf(name: string): number | null {
  const match = /^ds-analyzer-(?:[a-z]+-)?(\d+)(?:-[a-z]+-\d+)?$/.exec(name);
  return match ? Number(match[1]) : null;
}

/** The ds-analyzer-* groups under `roots`; one whose owner's pid runs is in use, whatever runs it (clean names it). */
export function findLeftoverCgroups(roots: readonly string[], fs: CgroupFs = realCgroupFs): LeftoverCgroup[] {
  const found: LeftoverCgroup[] = [];
  for (const root of roots) {
    for (const name of fs
      .children(root)
      .filter((n) => n.startsWith(JOB_CGROUP_PREFIX))
      .sort()) {
      const dir = join(root, name);
      const ownerPid = ownerPidOf(name);
      const ownerCommand = ownerPid === null ? null : fs.command(ownerPid);
      found.push({ dir, ownerPid, inUse: ownerCommand !== null, ownerCommand, pids: fs.procs(dir) ?? [] });
    }
  }
  return found;
}

/** Kills the processes in a left group (a killed run's job), waits up to `timeoutMs` for it to empty, removes it. */
export async function emptyAndRemove(
  dir: string,
  fs: CgroupFs = realCgroupFs,
  timeoutMs = 5000,
): Promise<{ killed: number[]; error: string | null }> {
  const killed: number[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pids = fs.procs(dir);
    if (pids === null) return { killed, error: null };
    for (const pid of pids.filter((p) => !killed.includes(p))) if (fs.kill(pid)) killed.push(pid);
    if (pids.length === 0) {
      const error = fs.remove(dir);
      if (error === null || Date.now() > deadline) return { killed, error };
    } else if (Date.now() > deadline) {
      return { killed, error: 'EBUSY' };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
