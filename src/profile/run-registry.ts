// Profiles running on this machine, one file each in a machine-wide folder.
// Two profiles at once evict each other's warmed files, pause and resume the
// same reclaim and share the CPUs: each measures the other. So a profile
// starts only where no other runs, or, where the user allows it, runs and both
// profiles say so. A run is alive while its PID runs with the start time it
// recorded (/proc/PID/stat), so a killed run's file is stale, not a lock.
import { appendFileSync, chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import { REGISTRY_TEXT } from './run-text.js';

/** A profile that runs, as its registry file names it. */
export interface RegisteredRun {
  pid: number;
  /** The process's start, in clock ticks since boot (/proc/PID/stat field 22): the PID's owner, not a reused PID. */
  startTicks: number;
  /** The profile it writes (absolute). */
  profile: string;
  /** ISO time it started. */
  startedAt: string;
}

/** This run's place in the registry. */
export interface RunRegistration {
  /** The words, once each, for every run that ran beside this one (added to the profile's warnings). */
  noteNeighbours(warnings: string[]): void;
  /** Removes this run's files; idempotent. */
  release(): void;
}

/** The machine-wide folder: in /tmp, every user's, unless DSA_RUN_REGISTRY moves it (tests, one per fake node). */
export function registryDir(env: NodeJS.ProcessEnv): string {
  return env.DSA_RUN_REGISTRY || '/tmp/ds-analyzer-runs';
}

/**
 * Registers this process's profile: refused with a UserError naming the
 * running one unless `allowConcurrent`, in which case each is told of the
 * other (this one now, the other at its next save).
 */
export function registerRun(dir: string, profile: string, allowConcurrent: boolean): RunRegistration {
  openFolder(dir);
  const others = liveRuns(dir);
  if (others.length > 0 && !allowConcurrent)
    throw new UserError(REGISTRY_TEXT.refused(others[0]), ExitCode.Environment);
  const self: RegisteredRun = {
    pid: process.pid,
    startTicks: startTicks(process.pid) ?? 0,
    profile,
    startedAt: new Date().toISOString(),
  };
  const file = join(dir, `${self.pid}.json`);
  const beside = join(dir, `${self.pid}.beside`);
  writeFileSync(file, JSON.stringify(self));
  // Others append to it: writable by every user, as the folder is.
  writeFileSync(beside, '');
  chmodSync(beside, 0o666);
  for (const other of others) appendFileSync(join(dir, `${other.pid}.beside`), `${JSON.stringify(self)}\n`);
  const told = new Set<string>();
  return {
    noteNeighbours(warnings) {
      for (const run of [...others, ...readBeside(beside)]) {
        const words = REGISTRY_TEXT.beside(run);
        if (told.has(words)) continue;
        told.add(words);
        warnings.push(words);
      }
    },
    release() {
      rmSync(file, { force: true });
      rmSync(beside, { force: true });
    },
  };
}

/** The folder, made sticky and open to every user when this run makes it (as /tmp itself is). */
function openFolder(dir: string): void {
  const made = mkdirSync(dir, { recursive: true });
  if (made !== undefined) chmodSync(dir, 0o1777);
}

/** The runs registered and still running; a dead run's files are removed on the way. */
export function liveRuns(dir: string): RegisteredRun[] {
  const live: RegisteredRun[] = [];
  for (const name of readdirSync(dir)) {
    if (!name.endsWith('.json')) continue;
    const run = readRun(join(dir, name));
    if (run && run.pid !== process.pid && startTicks(run.pid) === run.startTicks) live.push(run);
    else if (run?.pid !== process.pid) removeStale(dir, name);
  }
  return live;
}

function readRun(path: string): RegisteredRun | null {
  try {
    const run = JSON.parse(readFileSync(path, 'utf8')) as RegisteredRun;
    return Number.isInteger(run.pid) && typeof run.profile === 'string' ? run : null;
  } catch {
    return null;
  }
}

function readBeside(path: string): RegisteredRun[] {
  try {
    return readFileSync(path, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as RegisteredRun);
  } catch {
    return [];
  }
}

/** Another user's stale file may not be ours to remove: it is then skipped, as it is not alive. */
function removeStale(dir: string, name: string): void {
  try {
    rmSync(join(dir, name), { force: true });
    rmSync(join(dir, name.replace(/\.json$/, '.beside')), { force: true });
  } catch {}
}

/** A process's start time in clock ticks since boot, or null where it does not run. */
function startTicks(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[19]);
  } catch {
    return null;
  }
}
