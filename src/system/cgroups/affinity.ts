import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ExitCode, UserError } from '../../errors.js';
import { CGROUP_TEXT } from './cgroup-text.js';
import { assertCommandExists } from '../kernel/resolve-command.js';
import { processTree } from '../kernel/proc.js';

/** Parses a kernel CPU list such as '0-3,8,10-11' into CPU numbers. */
export function parseCpuList(text: string): number[] {
  const cpus: number[] = [];
  for (const part of text.trim().split(',').filter(Boolean)) {
    const [from, to] = part.split('-').map(Number);
    for (let cpu = from; cpu <= (to ?? from); cpu++) cpus.push(cpu);
  }
  return cpus;
}

/** CPUs this process may run on (its affinity mask, as the kernel reports it). */
export function allowedCpus(status = readFileSync('/proc/self/status', 'utf8')): number[] {
  const line = /^Cpus_allowed_list:\s*(.+)$/m.exec(status);
  return line ? parseCpuList(line[1]) : [];
}

/** The command on the first `count` allowed CPUs (taskset's mask, inherited by every worker); `path`: the PATH. */
export function withCpus(
  count: number,
  argv: string[],
  path: string | undefined,
  allowed = allowedCpus(),
): { argv: string[]; cpus: number[] } {
  if (count > allowed.length) {
    throw new UserError(CGROUP_TEXT.tooManyCpus(count, allowed.length), ExitCode.BadValue);
  }
  assertCommandExists('taskset', path, '/');
  const cpus = allowed.slice(0, count);
  return { argv: ['taskset', '--cpu-list', cpus.join(','), ...argv], cpus };
}

/** Every thread of the tree under `rootPid` with the CPUs it may run on (one that reset its affinity shows). */
export function threadAffinities(rootPid: number, procRoot = '/proc'): { pid: number; tid: number; cpus: number[] }[] {
  const threads: { pid: number; tid: number; cpus: number[] }[] = [];
  for (const pid of processTree(rootPid, procRoot)) {
    let tids: string[];
    try {
      tids = readdirSync(join(procRoot, String(pid), 'task'));
    } catch {
      continue;
    }
    for (const tid of tids) {
      try {
        const cpus = allowedCpus(readFileSync(join(procRoot, String(pid), 'task', tid, 'status'), 'utf8'));
        if (cpus.length > 0) threads.push({ pid, tid: Number(tid), cpus });
      } catch {
        // gone
      }
    }
  }
  return threads;
}
