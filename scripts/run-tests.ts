/**
 * The test command (npm test) in two phases: first every file that holds no
 * timing against the machine, side by side (the unit tests and the behaviour
 * end-to-end tests); then the end-to-end files that hold a timing, an
 * accuracy or a proof (test-plan.ts), one at a time with nothing beside them.
 * At the end, each phase's wall time and the ten slowest files of the whole
 * run go to stderr, and one last line CI reads: "N passed, N failed". Exit
 * code 1 when a test failed or a run could not finish; 130 or 143 when Ctrl-C
 * or SIGTERM stopped it. The tests' temporary files go to a folder of the
 * run's own (TMPDIR), removed at the end.
 * Run: npm test  (or, once built, node dist/scripts/run-tests.js [side-by-side|alone])
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseMountinfo } from '../src/system/kernel/mountinfo.js';
import { listPids } from '../src/system/kernel/proc.js';
import { slowestLines } from './slowest-files.js';
import { filesOf, testPlan, type Phase, type Run } from './test-plan.js';

// The run's temporary folder, the TMPDIR of every test and of the jobs they start (Python's, torchrun's), removed at
// the end: a run leaves nothing in /tmp, a failed or killed test's folders included. Open to every user as /tmp is,
// for the jobs the --as-user tests run as nobody.
const suiteTmp = mkdtempSync(join(tmpdir(), 'dsa-suite-'));
chmodSync(suiteTmp, 0o1777);
// Every file's time, recorded by each run's reporter (slowest-files.ts) for the ten slowest of the whole run.
const SLOWEST_REPORTER = new URL('./slowest-files.js', import.meta.url).href;
const SLOWEST_FILE = join(suiteTmp, 'test-times.tsv');
writeFileSync(SLOWEST_FILE, '');

/**
 * Removes the run's temporary folder, unless a test left a file system mounted inside it (a FUSE mount that failed to
 * unmount): removing through it would delete what the mount serves. That, or what cannot be removed, is said, not thrown.
 */
function removeSuiteTmp(): void {
  const left = parseMountinfo(readFileSync('/proc/self/mountinfo', 'utf8'))
    .map((m) => m.mountPoint)
    .filter((point) => point.startsWith(`${suiteTmp}/`));
  if (left.length > 0) {
    process.stderr.write(`# ${suiteTmp} kept: a test left ${left.join(', ')} mounted (unmount it, then remove)\n`);
    return;
  }
  try {
    rmSync(suiteTmp, { recursive: true, force: true });
  } catch (error) {
    process.stderr.write(`# could not remove ${suiteTmp}: ${(error as Error).message}\n`);
  }
}

// Ctrl-C or CI's stop: the runners get the signal (a terminal's Ctrl-C reaches them already; a signal sent to this
// process alone is passed on) and end their test files; the run goes no further, and the temporary folder is removed
// once every process the run started has ended. The runners stay in this process group, so that a signal to the whole
// group (a CI's cancel) reaches every test too.
const runners = new Set<ChildProcess>();
let stoppedBy: NodeJS.Signals | null = null;
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.on(signal, () => {
    stoppedBy = signal;
    for (const runner of runners) runner.kill(signal);
  });

/**
 * The processes the run started, however far down and wherever reparented (a CLI whose test file was ended before it
 * saved its profile): those whose environment names the run's folder.
 */
function runProcesses(): number[] {
  const mark = Buffer.from(`TMPDIR=${suiteTmp}\0`);
  return listPids().filter((pid) => {
    try {
      return pid !== process.pid && readFileSync(`/proc/${pid}/environ`).includes(mark);
    } catch {
      return false; // gone, or not ours to read
    }
  });
}

/** Waits up to `sec` for every process the run started to end. */
async function runProcessesEnded(sec: number): Promise<void> {
  for (let waited = 0; waited < sec * 10 && runProcesses().length > 0; waited++)
    await new Promise((resolve) => setTimeout(resolve, 100));
}

interface Outcome {
  passed: number;
  failed: number;
  exitCode: number;
}

/**
 * Runs node's test runner on `files`, `concurrency` at a time, and counts from its summary. Its output is passed
 * through as it comes, or with `held`, kept and passed through once `held` resolves (two runs side by side do not
 * mix their TAP).
 */
async function run(files: string[], concurrency: number, held?: Promise<unknown>): Promise<Outcome> {
  const args = [
    '--test',
    `--test-concurrency=${concurrency}`,
    '--test-reporter=tap',
    '--test-reporter-destination=stdout',
    `--test-reporter=${SLOWEST_REPORTER}`,
    '--test-reporter-destination=stderr',
    ...files,
  ];
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, DSA_SLOWEST_FILE: SLOWEST_FILE, TMPDIR: suiteTmp },
  });
  runners.add(child);
  child.on('close', () => runners.delete(child));
  const counts = { passed: 0, failed: 0 };
  const kept: string[] = [];
  // The summary's last "# pass N" and "# fail N" lines (diagnostics of a test may also start with "#").
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (held) kept.push(line);
    else process.stdout.write(`${line}\n`);
    const pass = /^# pass (\d+)$/.exec(line);
    const fail = /^# fail (\d+)$/.exec(line);
    if (pass) counts.passed = Number(pass[1]);
    if (fail) counts.failed = Number(fail[1]);
  });
  const exitCode = await new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? 1)));
  if (held) {
    await held;
    for (const line of kept) process.stdout.write(`${line}\n`);
  }
  return { ...counts, exitCode };
}

// Where a group's module is written: beside dist/test, so that node's runner, which sorts its files by path, starts it
// after every test file of its run (the long end-to-end files first), wherever the checkout and TMPDIR are; a folder
// of this run's own, so that two runs in one checkout do not remove each other's.
const GROUPS_DIR = fileURLToPath(new URL(`../unit-groups/run-${process.pid}/`, import.meta.url));
let groupsWritten = 0;
/**
 * The files node's runner is given for `run`'s groups: a group of one, its file; a larger one, a module that imports
 * each of its files in turn, so that their tests run in one process.
 */
function runnerFiles(run: Run): string[] {
  return run.groups.map((group) => {
    if (group.length === 1) return group[0];
    mkdirSync(GROUPS_DIR, { recursive: true });
    const path = join(GROUPS_DIR, `group-${++groupsWritten}.mjs`);
    writeFileSync(path, group.map((file) => `await import(${JSON.stringify(pathToFileURL(file).href)});\n`).join(''));
    return path;
  });
}

/** Runs a phase: its runs side by side, the first one's output as it comes. */
async function runPhase(phase: Phase): Promise<Outcome> {
  const files = phase.runs.reduce((n, r) => n + filesOf(r).length, 0);
  const at = phase.runs.map((r) => `${r.groups.length}, ${r.concurrency} at a time`).join('; ');
  process.stderr.write(`# phase ${phase.name}: ${files} files in processes (${at})\n`);
  const [first, ...others] = phase.runs;
  if (!first) return { passed: 0, failed: 0, exitCode: 0 };
  const streamed = run(runnerFiles(first), first.concurrency);
  const outcomes = await Promise.all([streamed, ...others.map((r) => run(runnerFiles(r), r.concurrency, streamed))]);
  return outcomes.reduce((a, b) => ({
    passed: a.passed + b.passed,
    failed: a.failed + b.failed,
    exitCode: a.exitCode !== 0 ? a.exitCode : b.exitCode,
  }));
}

/** Each file's tests' time (ms), as the runs' reporters recorded it. */
function recordedTimes(): Map<string, number> {
  const times = new Map<string, number>();
  for (const line of readFileSync(SLOWEST_FILE, 'utf8').split('\n')) {
    const [ms, file] = line.split('\t');
    if (file) times.set(file, (times.get(file) ?? 0) + Number(ms));
  }
  return times;
}

const phases = testPlan();
const only = process.argv[2];
const chosen = only ? phases.filter((p) => p.name === only) : phases;
if (chosen.length === 0) {
  process.stderr.write(
    `run-tests: no phase '${only}': give ${phases.map((p) => p.name).join(' or ')}, or nothing for all\n`,
  );
  removeSuiteTmp();
  process.exit(2);
}
let passed = 0;
let failed = 0;
let exitCode = 0;
const took: string[] = [];
for (const phase of chosen) {
  if (stoppedBy) break;
  const started = Date.now();
  const outcome = await runPhase(phase);
  took.push(`${phase.name} ${((Date.now() - started) / 1000).toFixed(0)} s`);
  passed += outcome.passed;
  failed += outcome.failed;
  // A runner that ended badly without a failed test (a crash, a file that did not load) still fails the run.
  if (outcome.exitCode !== 0) exitCode = 1;
}
if (failed > 0) exitCode = 1;
process.stderr.write(`# phases: ${took.join(', ')}\n`);
process.stderr.write([...slowestLines(recordedTimes())].join(''));
if (stoppedBy) await runProcessesEnded(30);
rmSync(GROUPS_DIR, { recursive: true, force: true });
removeSuiteTmp();
process.stdout.write(`${passed} passed, ${failed} failed\n`);
process.exit(stoppedBy === 'SIGINT' ? 130 : stoppedBy === 'SIGTERM' ? 143 : exitCode);
