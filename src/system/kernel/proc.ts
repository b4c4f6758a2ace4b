// Reading /proc (proc(5)): process trees, CPU time and storage reads of a job's whole tree. Every reader tolerates a
// process vanishing mid-read: a DataLoader worker can exit at any moment.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { endianness } from 'node:os';
import { KernelFile, parseKernelNumber, readTextOrNull } from './read-text.js';

/** The fields of /proc/PID/stat this tool uses. */
export interface ProcStat {
  /** Process id (field 1). */
  pid: number;
  /** Command name without the parentheses (field 2; may contain spaces and parentheses). */
  comm: string;
  /** State letter, e.g. R, S, Z (field 3). */
  state: string;
  /** Parent pid (field 4). */
  ppid: number;
  /** Process group id (field 5). */
  pgrp: number;
  /** User-mode CPU time of the process itself, clock ticks (field 14). */
  utimeTicks: number;
  /** Kernel-mode CPU time of the process itself, clock ticks (field 15). */
  stimeTicks: number;
  /** User time of waited-for (reaped) children, clock ticks (field 16). */
  cutimeTicks: number;
  /** Kernel time of waited-for (reaped) children, clock ticks (field 17). */
  cstimeTicks: number;
  /** Start time after boot, clock ticks (field 22); with pid it identifies a process across pid reuse. */
  startTicks: number;
}

/** Parses /proc/PID/stat; null when it is not one. comm ends at the LAST ')': a process may name itself 'a) (b'. */
export function parseProcStat(text: string): ProcStat | null {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  const pid = Number(text.slice(0, open).trim());
  const rest = text
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  // rest[0] is field 3 (state); field n is rest[n - 3].
  if (rest.length < 20 || !Number.isInteger(pid)) return null;
  const field = (n: number): number => Number(rest[n - 3]);
  const stat: ProcStat = {
    pid,
    comm: text.slice(open + 1, close),
    state: rest[0],
    ppid: field(4),
    pgrp: field(5),
    utimeTicks: field(14),
    stimeTicks: field(15),
    cutimeTicks: field(16),
    cstimeTicks: field(17),
    startTicks: field(22),
  };
  const numbers = [
    stat.ppid,
    stat.pgrp,
    stat.utimeTicks,
    stat.stimeTicks,
    stat.cutimeTicks,
    stat.cstimeTicks,
    stat.startTicks,
  ];
  return numbers.every((n) => Number.isFinite(n) && n >= 0) ? stat : null;
}

// Built once: the sampler parses every io file of the job's tree at each sample.
const READ_BYTES = /^read_bytes:\s*(\d+)\s*$/m;
// Bytes the process caused to be sent to storage as its pages are dirtied; cancelled_write_bytes is left apart.
const WRITE_BYTES = /^write_bytes:\s*(\d+)\s*$/m;

let clockTicks: number | undefined;

// getauxval(3)'s AT_CLKTCK: the kernel hands each process its USER_HZ in the auxiliary vector.
const AT_CLKTCK = 17;

/** Clock ticks per second, read once: AT_CLKTCK of auxv, else `getconf CLK_TCK` (~50 ms of CPU), else 100. */
export function clkTck(auxvPath = '/proc/self/auxv'): number {
  if (clockTicks === undefined) {
    clockTicks = auxvValue(auxvPath, AT_CLKTCK) ?? getconfClkTck() ?? 100;
  }
  return clockTicks;
}

/** One entry of an auxiliary vector file (unsigned long pairs, host order); null when absent or unreadable. */
export function auxvValue(path: string, type: number): number | null {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch {
    return null;
  }
  const word = process.arch === 'ia32' || process.arch === 'arm' ? 4 : 8;
  const read = (offset: number): number =>
    word === 8
      ? Number(endianness() === 'LE' ? bytes.readBigUInt64LE(offset) : bytes.readBigUInt64BE(offset))
      : endianness() === 'LE'
        ? bytes.readUInt32LE(offset)
        : bytes.readUInt32BE(offset);
  for (let offset = 0; offset + 2 * word <= bytes.length; offset += 2 * word) {
    const key = read(offset);
    if (key === 0) break; // AT_NULL ends the vector
    if (key === type) {
      const value = read(offset + word);
      return Number.isInteger(value) && value > 0 ? value : null;
    }
  }
  return null;
}

function getconfClkTck(): number | null {
  try {
    const value = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8', timeout: 2000 }).trim());
    return Number.isInteger(value) && value > 0 ? value : null;
  } catch {
    return null;
  }
}

/** Reads and parses /proc/PID/stat; null when the process is gone. */
export function readProcStat(pid: number | 'self', procRoot = '/proc'): ProcStat | null {
  const text = readTextOrNull(`${procRoot}/${pid}/stat`);
  return text === null ? null : parseProcStat(text);
}

/** Pids of all processes in /proc. */
export function listPids(procRoot = '/proc'): number[] {
  let names: string[];
  try {
    names = readdirSync(procRoot);
  } catch {
    return [];
  }
  return names.filter((name) => /^\d+$/.test(name)).map(Number);
}

/** Stats of every process still readable. */
function allStats(procRoot: string): ProcStat[] {
  const stats: ProcStat[] = [];
  for (const pid of listPids(procRoot)) {
    const stat = readProcStat(pid, procRoot);
    if (stat) stats.push(stat);
  }
  return stats;
}

function descendants(roots: Iterable<number>, stats: ProcStat[]): Set<number> {
  const children = new Map<number, number[]>();
  for (const stat of stats) {
    const list = children.get(stat.ppid);
    if (list) list.push(stat.pid);
    else children.set(stat.ppid, [stat.pid]);
  }
  const alive = new Set(stats.map((s) => s.pid));
  const seen = new Set<number>();
  const queue = [...roots].filter((pid) => alive.has(pid));
  while (queue.length > 0) {
    const pid = queue.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    for (const child of children.get(pid) ?? []) queue.push(child);
  }
  return seen;
}

/** The root pid and all its descendants (by ppid), sorted; [] when the root is gone. */
export function processTree(rootPid: number, procRoot = '/proc'): number[] {
  return [...descendants([rootPid], allStats(procRoot))].sort((a, b) => a - b);
}

// The pid handed out last in this namespace (last field of /proc/loadavg); pids increase, wrapping at pid_max.
function parseLastPid(loadavg: string | null): number | null {
  const last = loadavg === null ? NaN : Number(loadavg.slice(loadavg.lastIndexOf(' ') + 1));
  return Number.isInteger(last) && last >= 0 ? last : null;
}

/** Tgid of /proc/PID/status: the process a task id belongs to (itself unless it is a thread); null when gone. */
function readTgid(pid: number, procRoot: string): number | null {
  const match = /^Tgid:\s*(\d+)/m.exec(readTextOrNull(`${procRoot}/${pid}/status`) ?? '');
  return match ? Number(match[1]) : null;
}

/** Options of TreeMembers. */
export interface TreeMembersOptions {
  /** Longest time between two walks of every process (default FULL_WALK_MS). */
  fullWalkMs?: number;
  /** ms clock (tests). */
  now?: () => number;
}

// Every process is read again at least this often: a safety net for a /proc of another pid namespace, whose loadavg
// counts other pids. A walk costs ~1.5 ms of CPU at 90 processes.
const FULL_WALK_MS = 30_000;
// Pids handed out just before a walk that it did not list, looked at again at the next reading.
const RECENT_PIDS = 8;
// More new pids than this since the last reading: one walk of every process costs less than reading each.
const MAX_NEW_PIDS = 64;

/** Where a root came from. */
export interface RootOrigin {
  /** This process spawned it just now (no child of it can be older than the last pid handed out at the spawn). */
  spawnedNow?: boolean;
}

/**
 * The live processes of a tree: a root, its descendants, and every process once in it while it lives. Only the members
 * and the pids handed out since the last reading are read; /proc is walked at the first reading (unless the root was
 * spawned now), after MAX_NEW_PIDS new pids, and every fullWalkMs.
 */
export class TreeMembers {
  private rootPid: number | null;
  /** Members at the last reading: pid to start time. */
  private known = new Map<number, number>();
  /** On the real /proc, each member's stat and loadavg are kept open (one pread a reading); a fake /proc's are not. */
  private readonly hold: boolean;
  private readonly statFiles = new Map<number, KernelFile>();
  private readonly loadavg: KernelFile;
  /** /proc/loadavg's last pid at the last reading; null: walk next time. */
  private lastPid: number | null = null;
  private walkedAt = -Infinity;
  /** New pids /proc did not show yet at the last reading: looked at once more. */
  private pending: number[] = [];
  private pidMax: number | null | undefined;
  private readonly fullWalkMs: number;
  private readonly now: () => number;

  constructor(
    rootPid: number | null,
    private readonly procRoot = '/proc',
    options: TreeMembersOptions = {},
  ) {
    this.rootPid = rootPid;
    this.fullWalkMs = options.fullWalkMs ?? FULL_WALK_MS;
    this.now = options.now ?? Date.now;
    this.hold = procRoot === '/proc';
    this.loadavg = new KernelFile(`${procRoot}/loadavg`);
  }

  /** Sets the root; the next reading walks every process, unless the root was spawned just now. */
  setRoot(pid: number, root: RootOrigin = {}): void {
    this.rootPid = pid;
    this.lastPid = null;
    if (!root.spawnedNow) return;
    // Its descendants can only hold pids handed out after its own: the first reading looks at those only.
    this.lastPid = pid;
    this.walkedAt = this.now();
    this.pending = [];
  }

  /** The members' stats now, in no particular order; [] without a root. */
  read(): ProcStat[] {
    if (this.rootPid === null) return [];
    const last = parseLastPid(this.hold ? this.loadavg.read() : readTextOrNull(`${this.procRoot}/loadavg`));
    const now = this.now();
    const created =
      last === null || this.lastPid === null || now - this.walkedAt >= this.fullWalkMs
        ? null
        : this.pidsSince(this.lastPid, last);
    const members = created === null ? this.walk(last) : this.update(created);
    if (created === null) this.walkedAt = now;
    this.lastPid = last;
    this.known = new Map([...members.values()].map((s) => [s.pid, s.startTicks]));
    for (const [pid, file] of this.statFiles) {
      if (members.has(pid)) continue;
      file.close();
      this.statFiles.delete(pid);
    }
    return [...members.values()];
  }

  /** Closes the files kept open; a later reading opens them again. */
  close(): void {
    for (const file of this.statFiles.values()) file.close();
    this.statFiles.clear();
    this.loadavg.close();
  }

  /** A member's stat: through its kept descriptor on the real /proc (dropped once it fails: the process is gone). */
  private readMember(pid: number): ProcStat | null {
    if (!this.hold) return readProcStat(pid, this.procRoot);
    let file = this.statFiles.get(pid);
    if (!file) {
      file = new KernelFile(`${this.procRoot}/${pid}/stat`);
      this.statFiles.set(pid, file);
    }
    const text = file.read();
    const stat = text === null ? null : parseProcStat(text);
    if (stat === null) {
      file.close();
      this.statFiles.delete(pid);
    }
    return stat;
  }

  /**
   * Every process read: the root's descendants and the known members'. The last pids handed out and not listed are
   * looked at again next time: a fork gets its pid before /proc shows it.
   */
  private walk(last: number | null): Map<number, ProcStat> {
    const stats = allStats(this.procRoot);
    const listed = new Set(stats.map((s) => s.pid));
    this.pending =
      last === null ? [] : range(Math.max(1, last - RECENT_PIDS + 1), last).filter((pid) => !listed.has(pid));
    const roots = [this.rootPid!];
    for (const stat of stats) if (this.known.get(stat.pid) === stat.startTicks) roots.push(stat.pid);
    const members = descendants(roots, stats);
    return new Map(stats.filter((s) => members.has(s.pid)).map((s) => [s.pid, s]));
  }

  /** The known members read again, then the processes created since: a child of a member joins. */
  private update(created: number[]): Map<number, ProcStat> {
    const members = new Map<number, ProcStat>();
    const root = this.readMember(this.rootPid!);
    if (root) members.set(root.pid, root);
    for (const [pid, start] of this.known) {
      if (members.has(pid)) continue;
      const stat = this.readMember(pid);
      if (stat && stat.startTicks === start) members.set(pid, stat);
    }
    const missing: number[] = [];
    for (const pid of [...this.pending, ...created]) {
      if (members.has(pid)) continue;
      const stat = readProcStat(pid, this.procRoot);
      if (!stat) {
        if (!this.pending.includes(pid)) missing.push(pid);
        continue;
      }
      if (members.has(stat.ppid) && readTgid(pid, this.procRoot) === pid) members.set(pid, stat);
    }
    this.pending = missing;
    return members;
  }

  /** Pids handed out after `from` up to `to`, in the order they were handed out; null when a walk costs less. */
  private pidsSince(from: number, to: number): number[] | null {
    if (to === from) return [];
    if (to > from) return to - from > MAX_NEW_PIDS ? null : range(from + 1, to);
    // Wrapped at pid_max (to 300 in the first namespace, 1 in others: 1 covers both).
    this.pidMax ??= parseKernelNumber(readTextOrNull(`${this.procRoot}/sys/kernel/pid_max`));
    if (this.pidMax === null || this.pidMax - 1 - from + to > MAX_NEW_PIDS) return null;
    return [...range(from + 1, this.pidMax - 1), ...range(1, to)];
  }
}

function range(from: number, to: number): number[] {
  const out: number[] = [];
  for (let pid = from; pid <= to; pid++) out.push(pid);
  return out;
}

/** CPU seconds of a process, with its reaped children's unless `ownOnly`; null when it is gone. */
export function cpuSeconds(pid: number | 'self', options: { ownOnly?: boolean } = {}): number | null {
  const stat = readProcStat(pid);
  if (!stat) return null;
  const ticks = stat.utimeTicks + stat.stimeTicks + (options.ownOnly ? 0 : stat.cutimeTicks + stat.cstimeTicks);
  return ticks / clkTck();
}

/** read_bytes and write_bytes of /proc/PID/io in one read; null when the file is gone or unreadable. */
export function ioCounters(pid: number | 'self', procRoot = '/proc'): { readBytes: number; writeBytes: number } | null {
  return parseIoCounters(readTextOrNull(`${procRoot}/${pid}/io`));
}

/** read_bytes and write_bytes of a /proc/PID/io text (a process's include its reaped children's); null without them. */
export function parseIoCounters(text: string | null): { readBytes: number; writeBytes: number } | null {
  const read = text === null ? null : READ_BYTES.exec(text);
  return read ? { readBytes: Number(read[1]), writeBytes: Number(WRITE_BYTES.exec(text!)?.[1] ?? 0) } : null;
}

/** Bytes this process caused to be fetched from storage (null where /proc/self/io does not exist). */
export function selfReadBytes(): number | null {
  return ioCounters('self')?.readBytes ?? null;
}
