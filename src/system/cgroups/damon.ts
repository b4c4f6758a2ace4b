import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { errorCode } from '../kernel/errno.js';
import { readTextOrNull } from '../kernel/read-text.js';

/** Where the kernel's DAMON sysfs interface lives (Documentation/admin-guide/mm/damon/usage.rst). */
const DAMON_ADMIN = '/sys/kernel/mm/damon/admin';
/** The DAMON_RECLAIM module's switch (Documentation/admin-guide/mm/damon/reclaim.rst). */
const DAMON_RECLAIM_ENABLED = '/sys/module/damon_reclaim/parameters/enabled';

/** The running DAMON schemes that page out memory, the page cache included (seen: pages idle 60 s paged out). */
export function reclaimingDamonSchemes(admin = DAMON_ADMIN, reclaimModule = DAMON_RECLAIM_ENABLED): string[] {
  // DAMON_RECLAIM (mm/damon/reclaim.c) runs its own physical-memory pageout, not listed under admin/.
  const module = read(reclaimModule) === 'Y' ? ['DAMON_RECLAIM: pageout on paddr memory'] : [];
  return [
    ...module,
    ...reclaimingKdamonds(admin).flatMap((k) => Array(k.schemes).fill(`kdamond ${k.id}: pageout on paddr memory`)),
  ];
}

/** The running kdamonds with paddr pageout schemes: their number and how many such schemes each runs. */
function reclaimingKdamonds(admin: string): { id: string; schemes: number }[] {
  const kdamonds = join(admin, 'kdamonds');
  const found: { id: string; schemes: number }[] = [];
  for (const k of numbered(kdamonds)) {
    const dir = join(kdamonds, k);
    if (read(join(dir, 'state')) !== 'on') continue;
    let schemes = 0;
    for (const c of numbered(join(dir, 'contexts'))) {
      const context = join(dir, 'contexts', c);
      // Only physical-address pageout reaches any file's page cache (vaddr: chosen processes).
      if (read(join(context, 'operations')) !== 'paddr') continue;
      for (const s of numbered(join(context, 'schemes')))
        if (read(join(context, 'schemes', s, 'action')) === 'pageout') schemes++;
    }
    if (schemes > 0) found.push({ id: k, schemes });
  }
  return found;
}

function numbered(dir: string): string[] {
  try {
    return readdirSync(dir).filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
}

function read(file: string): string | null {
  return readTextOrNull(file)?.trim() ?? null;
}

/** Reclaimers paused for a profile, and how to restore them. */
export interface PausedReclaimers {
  /** What was paused, for the profile's notes ('kdamond 0', 'DAMON_RECLAIM'). */
  paused: string[];
  /** Why a reclaimer could not be paused (not root, ...); empty when all were. */
  failures: string[];
  /** Turns the paused ones back on and ends the guardian; idempotent. */
  restore(): void;
}

/** Files to write to pause one reclaimer, and the values that pause and restore it. */
interface Switch {
  name: string;
  file: string;
  off: string;
  on: string;
}

/** Pauses those reclaimers while a warm dataset is measured; a detached guardian restores them if this process dies. */
export function pauseReclaimers(
  admin = DAMON_ADMIN,
  reclaimModule = DAMON_RECLAIM_ENABLED,
  stateFile: string | null = null,
): PausedReclaimers {
  const switches: Switch[] = [];
  if (read(reclaimModule) === 'Y') switches.push({ name: 'DAMON_RECLAIM', file: reclaimModule, off: 'N', on: 'Y' });
  for (const k of reclaimingKdamonds(admin))
    switches.push({ name: `kdamond ${k.id}`, file: join(admin, 'kdamonds', k.id, 'state'), off: 'off', on: 'on' });
  const { done: paused, failures } = flip(switches, (s) => s.off);
  // Written before the guardian starts: should both die (a reboot mid-run, a killed session), clean reads it back.
  const recorded = paused.length > 0 && stateFile !== null && recordPause(stateFile, paused);
  const guardian = paused.length > 0 ? startGuardian(paused, recorded ? stateFile : null) : null;
  let restored = false;
  return {
    paused: paused.map((s) => s.name),
    failures,
    restore() {
      if (restored) return;
      restored = true;
      flip(paused, (s) => s.on);
      guardian?.kill('SIGKILL');
      if (recorded) rmSync(stateFile!, { force: true });
    },
  };
}

/** The pause as recorded on disk: who paused what, and the value that restores each. */
export interface RecordedPause {
  /** The CLI that paused them. */
  pid: number;
  /** Each switch turned off: its name, its file and the value it had. */
  switches: { name: string; file: string; on: string }[];
}

/** Writes the pause's record; false when it cannot (a read-only home): the guardian still restores. */
function recordPause(stateFile: string, paused: readonly Switch[]): boolean {
  const record: RecordedPause = {
    pid: process.pid,
    switches: paused.map(({ name, file, on }) => ({ name, file, on })),
  };
  try {
    mkdirSync(dirname(stateFile), { recursive: true });
    writeFileSync(stateFile, JSON.stringify(record) + '\n');
    return true;
  } catch {
    return false;
  }
}

/** The pause a run recorded and never restored; null when none is, 'unreadable' when its file does not parse. */
export function readRecordedPause(stateFile: string): RecordedPause | null | 'unreadable' {
  const text = readTextOrNull(stateFile);
  if (text === null) return null;
  try {
    const record = JSON.parse(text) as RecordedPause;
    const valid =
      Number.isInteger(record.pid) &&
      Array.isArray(record.switches) &&
      record.switches.every(
        (s) =>
          typeof s.name === 'string' && typeof s.file === 'string' && typeof s.on === 'string' && /^(on|Y)$/.test(s.on),
      );
    return valid ? record : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

/** Turns a recorded pause's reclaimers back on and removes the record once all are back. */
export function restoreRecordedPause(
  stateFile: string,
  record: RecordedPause,
): { restored: string[]; failures: string[] } {
  const { done, failures } = flip(record.switches, (s) => s.on);
  if (failures.length === 0) rmSync(stateFile, { force: true });
  return { restored: done.map((s) => s.name), failures };
}

/** Writes each switch's `value`; the switches written, and the others as 'name: CODE'. */
function flip<S extends { name: string; file: string }>(switches: readonly S[], value: (s: S) => string) {
  const done: S[] = [];
  const failures: string[] = [];
  for (const s of switches) {
    try {
      writeFileSync(s.file, value(s));
      done.push(s);
    } catch (error) {
      failures.push(`${s.name}: ${errorCode(error)}`);
    }
  }
  return { done, failures };
}

/** A shell that restores `paused` once this process is gone, and removes the pause's record. */
function startGuardian(paused: readonly Switch[], stateFile: string | null): ChildProcess {
  const restoreAll = [
    ...paused.map((s) => `echo ${s.on} > ${shellQuoted(s.file)}`),
    ...(stateFile ? [`rm -f ${shellQuoted(stateFile)}`] : []),
  ].join('; ');
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; ${restoreAll}`;
  const child = spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' });
  child.unref();
  return child;
}

/** `text` as one sh word: in single quotes, each single quote closed, escaped and reopened. */
function shellQuoted(text: string): string {
  const closeEscapeReopen = "'" + '\\' + "''";
  return "'" + text.split("'").join(closeEscapeReopen) + "'";
}
