import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { endianness, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  TreeMembers,
  auxvValue,
  clkTck,
  cpuSeconds,
  ioCounters,
  parseIoCounters,
  parseProcStat,
  processTree,
  readProcStat,
  selfReadBytes,
} from '../../../src/system/kernel/proc.js';
import { TreeAccounting } from '../../../src/system/kernel/tree-accounting.js';
import { evict, pageCacheSupport, residency } from '../../../src/system/page-cache/page-cache.js';
import { expectedWholeDisk } from './whole-disk.js';

function statLine(
  pid: number,
  comm: string,
  ppid: number,
  ticks: { u: number; s: number; cu: number; cs: number },
  start = 1000,
): string {
  const f5to13 = Array(9).fill(0).join(' ');
  const f18to21 = Array(4).fill(0).join(' ');
  const tail = Array(30).fill(0).join(' ');
  return `${pid} (${comm}) S ${ppid} ${f5to13} ${ticks.u} ${ticks.s} ${ticks.cu} ${ticks.cs} ${f18to21} ${start} ${tail}\n`;
}

async function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise((resolve) => child.once('exit', resolve));
}

async function waitFor<T>(read: () => T, ok: (value: T) => boolean, timeoutMs = 3000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = read();
  while (!ok(value) && Date.now() < deadline) {
    await sleep(20);
    value = read();
  }
  return value;
}

test('parseProcStat splits at the last parenthesis (comm with spaces and parentheses)', () => {
  const stat = parseProcStat(statLine(42, 'evil) (name x', 7, { u: 11, s: 12, cu: 13, cs: 14 }, 999));
  assert.ok(stat);
  assert.equal(stat.pid, 42);
  assert.equal(stat.comm, 'evil) (name x');
  assert.equal(stat.ppid, 7);
  assert.deepEqual(
    [stat.utimeTicks, stat.stimeTicks, stat.cutimeTicks, stat.cstimeTicks, stat.startTicks],
    [11, 12, 13, 14, 999],
  );
  assert.equal(parseProcStat('garbage'), null);
  assert.equal(parseProcStat('1 (x) S 0 1 2'), null);
});

test('parseIoCounters reads write_bytes, not cancelled_write_bytes', () => {
  assert.equal(
    parseIoCounters('rchar: 5\nread_bytes: 4096\nwrite_bytes: 7\ncancelled_write_bytes: 9\n')?.writeBytes,
    7,
  );
  assert.equal(parseIoCounters('rchar: 5\n'), null);
});

test('parseIoCounters reads read_bytes', () => {
  assert.equal(
    parseIoCounters('rchar: 5\nread_bytes: 4096\nwrite_bytes: 7\ncancelled_write_bytes: 0\n')?.readBytes,
    4096,
  );
  assert.equal(parseIoCounters(null), null);
});

test("clkTck is a positive integer, getconf's answer", () => {
  assert.ok(Number.isInteger(clkTck()) && clkTck() > 0);
  const getconf = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  assert.equal(clkTck(), getconf);
});

test('auxvValue reads an entry of an auxiliary vector, stops at AT_NULL, and answers null for a missing file', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'dsa-auxv-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const words = process.arch === 'ia32' || process.arch === 'arm' ? 4 : 8;
  const vector = (pairs: number[][]): Buffer => {
    const bytes = Buffer.alloc(pairs.length * 2 * words);
    const le = endianness() === 'LE';
    pairs
      .flat()
      .forEach((value, i) =>
        words === 8
          ? le
            ? bytes.writeBigUInt64LE(BigInt(value), i * 8)
            : bytes.writeBigUInt64BE(BigInt(value), i * 8)
          : le
            ? bytes.writeUInt32LE(value, i * 4)
            : bytes.writeUInt32BE(value, i * 4),
      );
    return bytes;
  };
  writeFileSync(
    join(dir, 'auxv'),
    vector([
      [6, 4096],
      [17, 250],
      [0, 0],
      [17, 999],
    ]),
  );
  assert.equal(auxvValue(join(dir, 'auxv'), 17), 250);
  assert.equal(auxvValue(join(dir, 'auxv'), 6), 4096);
  assert.equal(auxvValue(join(dir, 'auxv'), 33), null);
  assert.equal(auxvValue(join(dir, 'none'), 17), null);
});

test("processTree of sh -c 'sleep 2 & sleep 2 & wait' sees 3 processes", async (t) => {
  const child = spawn('sh', ['-c', 'sleep 2 & sleep 2 & wait'], { stdio: 'ignore' });
  t.after(() => child.kill('SIGKILL'));
  const tree = await waitFor(
    () => processTree(child.pid!),
    (pids) => pids.length >= 3,
  );
  assert.equal(tree.length, 3);
  assert.ok(tree.includes(child.pid!));
  child.kill('SIGKILL');
  await exited(child);
});

test('processTree of a missing pid is empty', () => {
  assert.deepEqual(processTree(2 ** 22 + 12345), []);
});

test('cpuSeconds of a busy child increases', async (t) => {
  const child = spawn('sh', ['-c', 'while :; do :; done'], { stdio: 'ignore' });
  t.after(() => child.kill('SIGKILL'));
  const first = await waitFor(
    () => cpuSeconds(child.pid!),
    (v) => v !== null,
  );
  assert.ok(first !== null);
  const later = await waitFor(
    () => cpuSeconds(child.pid!) ?? 0,
    (v) => v >= first + 0.05,
    5000,
  );
  assert.ok(later >= first + 0.05, `cpu ${first} -> ${later}`);
  child.kill('SIGKILL');
  await exited(child);
});

test('ioCounters and cpuSeconds answer null for a vanished pid', async () => {
  const child = spawn('true', [], { stdio: 'ignore' });
  const pid = child.pid!;
  await exited(child);
  assert.equal(ioCounters(pid), null);
  assert.equal(cpuSeconds(pid), null);
});

/** read_bytes of this process, read here without src/system/kernel/proc.ts; null where /proc/self/io cannot be read. */
function ioReadBytesHere(): number | null {
  try {
    return Number(/^read_bytes:\s*(\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))![1]);
  } catch {
    return null;
  }
}

test("selfReadBytes is this process's read_bytes, and grows by a cold read from storage", async (t) => {
  if (ioReadBytesHere() === null)
    return t.skip('/proc/self/io cannot be read here (a kernel without task I/O accounting)');
  const dir = mkdtempSync(join(tmpdir(), 'dsa-selfio-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // read_bytes counts what came from a block device: a tmpfs read never shows.
  const disk = expectedWholeDisk(dir);
  if ('skip' in disk) return t.skip(`a read from storage needs a block device: ${disk.skip}`);
  const support = pageCacheSupport();
  if (!support.evict || !support.residency) return t.skip(`cannot make a file cold: ${support.reason}`);
  const bytes = 4 * 1024 * 1024;
  const file = join(dir, 'cold.bin');
  writeFileSync(file, randomBytes(bytes));
  await evict([{ path: file }], { sync: true });
  assert.ok((await residency([{ path: file }])).fraction < 0.01, 'the file was evicted before the read');

  const below = ioReadBytesHere()!;
  const before = selfReadBytes();
  const above = ioReadBytesHere()!;
  assert.ok(
    before !== null && below <= before && before <= above,
    `read_bytes ${below}..${above}, selfReadBytes ${before}`,
  );
  readFileSync(file);
  const after = selfReadBytes();
  assert.ok(
    after !== null && after - before >= bytes,
    `a cold read of ${bytes} bytes moved selfReadBytes by ${after === null ? 'null' : after - before}`,
  );
});

test('TreeAccounting (fake /proc): reaped child counted once, auto-reaped child not lost', (t) => {
  const proc = mkdtempSync(join(tmpdir(), 'dsa-fakeproc-'));
  t.after(() => rmSync(proc, { recursive: true, force: true }));
  const put = (
    pid: number,
    ppid: number,
    ticks: { u: number; s: number; cu: number; cs: number },
    io: number,
    start = 1000,
  ): void => {
    mkdirSync(join(proc, String(pid)), { recursive: true });
    writeFileSync(join(proc, String(pid), 'stat'), statLine(pid, 'job (x)', ppid, ticks, start));
    writeFileSync(join(proc, String(pid), 'io'), `rchar: 0\nread_bytes: ${io}\nwrite_bytes: 0\n`);
  };
  const drop = (pid: number): void => rmSync(join(proc, String(pid)), { recursive: true, force: true });
  const hz = clkTck();
  put(1, 0, { u: 0, s: 0, cu: 0, cs: 0 }, 0);
  put(10, 1, { u: 100, s: 0, cu: 0, cs: 0 }, 1000);
  put(11, 10, { u: 50, s: 50, cu: 0, cs: 0 }, 5000);
  put(12, 10, { u: 30, s: 0, cu: 0, cs: 0 }, 700);
  put(99, 1, { u: 999, s: 0, cu: 0, cs: 0 }, 99999); // not in the job's tree
  const acc = new TreeAccounting(10, proc);
  let s = acc.sample();
  assert.deepEqual(s.pids, [10, 11, 12]);
  assert.equal(s.cpuSec, 230 / hz);
  assert.equal(s.readBytes, 6700);

  // 11 runs a bit more, then exits and is reaped by 10: 10's cutime/cstime and io absorb it.
  drop(11);
  put(10, 1, { u: 110, s: 0, cu: 60, cs: 60 }, 1000 + 6000);
  s = acc.sample();
  assert.deepEqual(s.pids, [10, 12]);
  // 10 own +10, 11's extra 20 ticks and 1000 bytes after the last sample are counted once.
  assert.equal(s.cpuSec, (230 + 10 + 20) / hz);
  assert.equal(s.readBytes, 6700 + 1000);

  // 12 vanishes without its parent absorbing it (SIGCHLD ignored): its work stays counted.
  drop(12);
  s = acc.sample();
  assert.deepEqual(s.pids, [10]);
  assert.equal(s.cpuSec, 260 / hz);
  assert.equal(s.readBytes, 7700);

  // Later growth of 10's own counters is not eaten by the expired credit.
  s = acc.sample();
  put(10, 1, { u: 140, s: 0, cu: 60, cs: 60 }, 7500);
  s = acc.sample();
  assert.equal(s.cpuSec, 290 / hz);
  assert.equal(s.readBytes, 8200);

  // pid reuse: a new process with the same pid but another start time counts from zero.
  drop(10);
  put(10, 1, { u: 5, s: 0, cu: 0, cs: 0 }, 100, 5000);
  s = acc.sample();
  assert.equal(s.cpuSec, 295 / hz);
  assert.equal(s.readBytes, 8300);
});

test('TreeAccounting (fake /proc): write_bytes of a reaped child counted once', (t) => {
  const proc = mkdtempSync(join(tmpdir(), 'dsa-fakeproc-'));
  t.after(() => rmSync(proc, { recursive: true, force: true }));
  const put = (pid: number, ppid: number, cu: number, written: number): void => {
    mkdirSync(join(proc, String(pid)), { recursive: true });
    writeFileSync(join(proc, String(pid), 'stat'), statLine(pid, 'job (x)', ppid, { u: 1, s: 0, cu, cs: 0 }, 1000));
    writeFileSync(join(proc, String(pid), 'io'), `rchar: 0\nread_bytes: 0\nwrite_bytes: ${written}\n`);
  };
  put(10, 1, 0, 100);
  put(11, 10, 0, 4000);
  const acc = new TreeAccounting(10, proc);
  assert.equal(acc.sample().writeBytes, 4100);
  // 11 writes 1000 more, exits, and 10 absorbs its counters: the 4000 already counted are not counted again.
  rmSync(join(proc, '11'), { recursive: true, force: true });
  put(10, 1, 1, 100 + 5000);
  assert.equal(acc.sample().writeBytes, 5100);
});

test('TreeAccounting stays monotone and counts once when a real child exits', async (t) => {
  const busy = 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done';
  const child = spawn('sh', ['-c', `sh -c '${busy}'; sleep 0.6`], { stdio: 'ignore' });
  t.after(() => child.kill('SIGKILL'));
  const acc = new TreeAccounting(child.pid!);
  const series: number[] = [];
  let sawTwo = false;
  let afterExit = false;
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const s = acc.sample();
    series.push(s.cpuSec);
    if (s.pids.length === 2) {
      sawTwo = true;
      // The busy shell has been reaped once sleep runs.
      if (s.pids.some((p) => readProcStat(p)?.comm === 'sleep')) afterExit = true;
    }
    if (afterExit && s.cpuSec > 0) break;
    await sleep(40);
  }
  assert.ok(sawTwo, 'saw the tree with two processes');
  for (let i = 1; i < series.length; i++)
    assert.ok(series[i] >= series[i - 1], `monotone at ${i}: ${series.join(',')}`);
  const total = series.at(-1)!;
  const rootWithChildren = cpuSeconds(child.pid!) ?? 0;
  assert.ok(total > 0.05, `busy child counted (${total})`);
  // Counted once: the tree total is about the root with its reaped child, not twice that.
  assert.ok(total <= rootWithChildren + 0.1, `tree ${total} vs root+children ${rootWithChildren}`);
  child.kill('SIGKILL');
  await exited(child);
});

/**
 * A fake /proc for TreeMembers: processes (stat, status, io) and threads
 * (a task id whose stat names the process's parent, as /proc/<tid>/stat
 * does, and whose status names its process), with /proc/loadavg's last pid
 * advanced at each creation as the kernel does.
 */
class FakeProc {
  readonly root = mkdtempSync(join(tmpdir(), 'dsa-fakeproc-'));
  lastPid: number;
  readonly stats = new Map<number, { ppid: number; tgid: number; start: number }>();

  constructor(lastPid = 100, pidMax?: number) {
    this.lastPid = lastPid;
    this.writeLoadavg();
    if (pidMax !== undefined) {
      mkdirSync(join(this.root, 'sys', 'kernel'), { recursive: true });
      writeFileSync(join(this.root, 'sys', 'kernel', 'pid_max'), `${pidMax}\n`);
    }
  }

  /** A process or thread at `pid` (default: the next pid); the kernel shows it in /proc unless `hidden`. */
  add(ppid: number, options: { pid?: number; tgid?: number; hidden?: boolean } = {}): number {
    const pid = options.pid ?? this.lastPid + 1;
    this.lastPid = pid;
    this.writeLoadavg();
    this.stats.set(pid, { ppid, tgid: options.tgid ?? pid, start: 1000 + pid });
    if (!options.hidden) this.show(pid);
    return pid;
  }

  show(pid: number): void {
    const { ppid, tgid, start } = this.stats.get(pid)!;
    mkdirSync(join(this.root, String(pid)), { recursive: true });
    writeFileSync(join(this.root, String(pid), 'stat'), statLine(pid, 'p', ppid, { u: 1, s: 0, cu: 0, cs: 0 }, start));
    writeFileSync(join(this.root, String(pid), 'status'), `Name:\tp\nTgid:\t${tgid}\nPid:\t${pid}\nPPid:\t${ppid}\n`);
    writeFileSync(join(this.root, String(pid), 'io'), 'read_bytes: 0\nwrite_bytes: 0\n');
  }

  exit(pid: number): void {
    this.stats.delete(pid);
    rmSync(join(this.root, String(pid)), { recursive: true, force: true });
  }

  private writeLoadavg(): void {
    writeFileSync(join(this.root, 'loadavg'), `0.00 0.00 0.00 1/100 ${this.lastPid}\n`);
  }
}

const pidsOf = (members: TreeMembers): number[] =>
  members
    .read()
    .map((s) => s.pid)
    .sort((a, b) => a - b);

test('TreeMembers (fake /proc): new children found among the new pids only, threads left out, a walk every fullWalkMs', (t) => {
  const proc = new FakeProc();
  t.after(() => rmSync(proc.root, { recursive: true, force: true }));
  let now = 0;
  const other = proc.add(1);
  const root = proc.add(other);
  const child = proc.add(root);
  const members = new TreeMembers(root, proc.root, { fullWalkMs: 5000, now: () => now });
  assert.deepEqual(pidsOf(members), [root, child]);

  now = 250;
  const grandchild = proc.add(child);
  const unrelated = proc.add(other);
  // A thread of the child: its /proc/<tid>/stat names the child's parent (a member), its status the child.
  const thread = proc.add(root, { tgid: child });
  assert.deepEqual(pidsOf(members), [root, child, grandchild]);
  assert.ok(!members.read().some((s) => s.pid === thread || s.pid === unrelated));
  // /proc lists processes only: the fake's thread goes before the next walk lists it.
  proc.exit(thread);

  // A child whose pid lies below the last reading (as if /proc had not shown it yet during a walk) waits for the next
  // walk.
  now = 500;
  proc.stats.set(60, { ppid: root, tgid: 60, start: 5000 });
  proc.show(60);
  assert.deepEqual(pidsOf(members), [root, child, grandchild]);
  now = 5000;
  assert.deepEqual(pidsOf(members), [60, root, child, grandchild]);

  // Gone processes leave; the tree's own stay while they live.
  now = 5250;
  proc.exit(grandchild);
  assert.deepEqual(pidsOf(members), [60, root, child]);
});

test('TreeMembers (fake /proc): a root spawned just now is read with the pids handed out after it, without a walk', (t) => {
  const proc = new FakeProc();
  t.after(() => rmSync(proc.root, { recursive: true, force: true }));
  const root = proc.add(1);
  const child = proc.add(root);
  // A "child" with a pid below the root's cannot exist for a root spawned just now: only a walk would find it.
  proc.stats.set(50, { ppid: root, tgid: 50, start: 5000 });
  proc.show(50);
  const spawned = new TreeMembers(null, proc.root, { fullWalkMs: 60_000 });
  spawned.setRoot(root, { spawnedNow: true });
  assert.deepEqual(pidsOf(spawned), [root, child], 'the new pids only');
  const walked = new TreeMembers(null, proc.root, { fullWalkMs: 60_000 });
  walked.setRoot(root);
  assert.deepEqual(pidsOf(walked), [50, root, child], 'a root of unknown origin: the first reading walks');
});

test('TreeMembers (fake /proc): a new pid /proc does not show yet is looked at again at the next reading', (t) => {
  const proc = new FakeProc();
  t.after(() => rmSync(proc.root, { recursive: true, force: true }));
  const root = proc.add(1);
  const members = new TreeMembers(root, proc.root, { fullWalkMs: 60_000 });
  assert.deepEqual(pidsOf(members), [root]);
  const late = proc.add(root, { hidden: true });
  assert.deepEqual(pidsOf(members), [root]);
  proc.show(late);
  assert.deepEqual(pidsOf(members), [root, late]);
});

test('TreeMembers (fake /proc): many new pids, or pid_max wrapped, are read by walking; a wrap within the limit by the new pids', (t) => {
  const proc = new FakeProc(300, 400);
  t.after(() => rmSync(proc.root, { recursive: true, force: true }));
  const root = proc.add(1);
  const members = new TreeMembers(root, proc.root, { fullWalkMs: 60_000 });
  assert.deepEqual(pidsOf(members), [root]);
  // 98 pids later (more than a walk costs): a child below the new pids is found too, by the walk.
  proc.stats.set(250, { ppid: root, tgid: 250, start: 9000 });
  proc.show(250);
  proc.lastPid = 398;
  proc.add(1, { pid: 398 });
  assert.deepEqual(pidsOf(members), [250, root]);
  // The next pids wrap at pid_max: 399, then 1, 2.
  const before = proc.add(root, { pid: 399 });
  const after = proc.add(before, { pid: 2 });
  assert.deepEqual(pidsOf(members), [after, 250, root, before]);
});

test('TreeMembers gives the answer of a walk at every reading (fake /proc, random histories)', () => {
  type Step = { kind: 'child' | 'thread' | 'unrelated' | 'exit' | 'hidden'; pick: number };
  const step = fc.record({
    kind: fc.constantFrom<Step['kind']>('child', 'child', 'thread', 'unrelated', 'exit', 'hidden'),
    pick: fc.nat(),
  });
  fc.assert(
    fc.property(fc.array(fc.array(step, { maxLength: 4 }), { minLength: 1, maxLength: 8 }), (rounds) => {
      const proc = new FakeProc(500, 32768);
      try {
        const root = proc.add(1);
        const members = new TreeMembers(root, proc.root, { fullWalkMs: 60_000 });
        // What a walk answers: every process whose parent is a member, the members kept while they live.
        let expected = new Set([root]);
        assert.deepEqual(pidsOf(members), [root]);
        for (const round of rounds) {
          const hidden: number[] = [];
          const threads: number[] = [];
          for (const { kind, pick } of round) {
            // A process forks once it runs: never while the kernel has yet to show it.
            const live = [...proc.stats.keys()].filter(
              (pid) => proc.stats.get(pid)!.tgid === pid && pid !== root && !hidden.includes(pid),
            );
            const parents = [root, ...live];
            if (kind === 'child') proc.add(parents[pick % parents.length]);
            else if (kind === 'unrelated') proc.add(1);
            else if (kind === 'thread') {
              const owner = parents[pick % parents.length];
              threads.push(proc.add(proc.stats.get(owner)!.ppid, { tgid: owner }));
            } else if (kind === 'exit' && live.length > 0) proc.exit(live[pick % live.length]);
            else if (kind === 'hidden') hidden.push(proc.add(parents[pick % parents.length], { hidden: true }));
          }
          const visible = [...proc.stats].filter(([pid, s]) => s.tgid === pid && !hidden.includes(pid));
          expected = new Set([...expected].filter((pid) => proc.stats.has(pid)));
          for (let grew = true; grew; ) {
            grew = false;
            for (const [pid, s] of visible)
              if (!expected.has(pid) && expected.has(s.ppid)) grew = expected.add(pid) !== undefined;
          }
          assert.deepEqual(
            pidsOf(members),
            [...expected].sort((a, b) => a - b),
          );
          // The kernel shows a forked task within microseconds: by the next reading. Threads are never listed by /proc.
          for (const pid of hidden) proc.show(pid);
          for (const pid of threads) proc.exit(pid);
        }
      } finally {
        rmSync(proc.root, { recursive: true, force: true });
      }
    }),
    { numRuns: 40 },
  );
});

test('TreeMembers on this machine: a grandchild started later is found without walking /proc, a thread is not a process', async (t) => {
  if (!existsSync('/proc/loadavg')) return t.skip('/proc/loadavg cannot be read here');
  const script =
    "setTimeout(() => { require('node:child_process').spawn('sleep', ['3'], { stdio: 'ignore' }); new (require('node:worker_threads').Worker)('setTimeout(() => {}, 3000)', { eval: true }); }, 300); setTimeout(() => {}, 3000);";
  const child = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
  t.after(() => child.kill('SIGKILL'));
  const members = new TreeMembers(child.pid!, '/proc', { fullWalkMs: 60_000 });
  assert.deepEqual(pidsOf(members), [child.pid!]);
  // The grandchild is node until it execs sleep: waited for, with its worker thread started beside it.
  const isSleep = (pids: number[]): boolean => pids.some((pid) => readProcStat(pid)?.comm === 'sleep');
  const tree = await waitFor(
    () => pidsOf(members),
    (pids) => pids.length > 2 || isSleep(pids),
    5000,
  );
  await sleep(200);
  const later = pidsOf(members);
  assert.equal(
    later.length,
    2,
    `the node child and its sleep, not the worker thread: ${tree.join(',')} then ${later.join(',')}`,
  );
  assert.ok(isSleep(later));
  assert.deepEqual(later, processTree(child.pid!));
  child.kill('SIGKILL');
  await exited(child);
});
