// Profiles running on this machine, one file each in a machine-wide folder: two at once measure each other, so a
// profile starts only where no other runs, or (--allow-concurrent) both say so. A run is alive while its PID runs with
// the start time it recorded, so a killed run's file is stale, not a lock.
import { appendFileSync, chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import { readProcStat } from '../system/kernel/proc.js';
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

/** The machine-wide folder: in /tmp, every user's, unless DSA_RUN_REGISTRY moves it (tests, one per fake node). */
export function registryDir(env: NodeJS.ProcessEnv): string {
  return env.DSA_RUN_REGISTRY || '/tmp/ds-analyzer-runs';
}

/** This run's place in the registry: entered once its inputs are known good, released when it ends. */
export class RunRegistration {
  private others: RegisteredRun[] = [];
  private readonly told = new Set<string>();
  private readonly file: string;
  private readonly beside: string;

  constructor(
    private readonly dir: string,
    private readonly profile: string,
    private readonly allowConcurrent: boolean,
  ) {
    this.file = join(dir, `${process.pid}.json`);
    this.beside = join(dir, `${process.pid}.beside`);
  }

  /** Registers this profile: a UserError naming the running one unless `allowConcurrent` (then each is told). */
  enter(): void {
    openFolder(this.dir);
    this.others = liveRuns(this.dir);
    if (this.others.length > 0 && !this.allowConcurrent)
      throw new UserError(REGISTRY_TEXT.refused(this.others[0]), ExitCode.Environment);
    const self: RegisteredRun = {
      pid: process.pid,
      startTicks: readProcStat(process.pid)?.startTicks ?? 0,
      profile: this.profile,
      startedAt: new Date().toISOString(),
    };
    writeFileSync(this.file, JSON.stringify(self));
    // Others append to it: writable by every user, as the folder is.
    writeFileSync(this.beside, '');
    chmodSync(this.beside, 0o666);
    for (const other of this.others) appendFileSync(join(this.dir, `${other.pid}.beside`), `${JSON.stringify(self)}\n`);
  }

  /** The words, once each, for every run that ran beside this one (added to the profile's warnings). */
  noteNeighbours(warnings: string[]): void {
    for (const run of [...this.others, ...readBeside(this.beside)]) {
      const words = REGISTRY_TEXT.beside(run);
      if (this.told.has(words)) continue;
      this.told.add(words);
      warnings.push(words);
    }
  }

  /** Removes this run's files; idempotent. */
  release(): void {
    rmSync(this.file, { force: true });
    rmSync(this.beside, { force: true });
  }
}

/** A registration entered at once (tests, and callers with nothing to check first). */
export function registerRun(dir: string, profile: string, allowConcurrent: boolean): RunRegistration {
  const registration = new RunRegistration(dir, profile, allowConcurrent);
  registration.enter();
  return registration;
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
    if (run && run.pid !== process.pid && readProcStat(run.pid)?.startTicks === run.startTicks) live.push(run);
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
