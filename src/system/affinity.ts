import { readFileSync } from 'node:fs';
import { ExitCode, UserError } from '../errors.js';
import { assertCommandExists } from '../profile/resolve-command.js';

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

/**
 * The command run on the first `count` of the allowed CPUs. An affinity mask
 * (taskset, no root needed) is inherited by every child, so DataLoader
 * workers and torchrun ranks share those CPUs as they would on a smaller machine.
 */
export function withCpus(count: number, argv: string[], allowed = allowedCpus(), path = process.env.PATH): { argv: string[]; cpus: number[] } {
  if (count > allowed.length) {
    throw new UserError(`--cpus ${count}: only ${allowed.length} CPUs are available here; choose counts up to ${allowed.length}`, ExitCode.BadValue);
  }
  assertCommandExists('taskset', path, '/');
  const cpus = allowed.slice(0, count);
  return { argv: ['taskset', '--cpu-list', cpus.join(','), ...argv], cpus };
}
