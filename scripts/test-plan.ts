/**
 * Which test files run side by side and which alone (run-tests.ts).
 *
 * Alone: the files that hold a measured time or rate against something
 * measured outside the profile's own run (the job run without the tool, the
 * emulator's settings, a cap, a prediction checked by a second run): a second
 * file on the other core would move one side and not the other. Everything
 * else runs side by side: the unit tests, and the end-to-end files that check
 * behaviour (exit codes, files, messages, proofs from bytes counted, times
 * against the job's own meter in the same run), each CLI run of them with a
 * run registry of its own (test/e2e/helpers.ts), so their real profiles do not
 * refuse each other. A file that holds both is split in two.
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * One run of node's test runner: its groups of test files, `concurrency` groups at a time. A group of one file is that
 * file, as node runs it; a larger group's files run in one process (run-tests.ts writes a module importing them).
 */
export interface Run {
  groups: string[][];
  concurrency: number;
}

/** A phase: its runs go side by side (node's runner orders its files by name, so a long file gets a run of its own). */
export interface Phase {
  name: string;
  runs: Run[];
}

const TEST_ROOT = fileURLToPath(new URL('../test/', import.meta.url));

/**
 * Files (test/NAME.test.ts) that run with nothing beside them: each holds a time or a rate against something
 * measured outside the profile's own run (the job run without the tool, a setting, a cap, a prediction checked by
 * a second run, another profile a run apart). A time held against the job's own meter over the same window moves
 * with the load on both sides, and a proof from bytes or requests counted holds under any load: those files run
 * side by side (gate-against, multi-node, multi-node-kill, remote-fuse, remote-https, remote-http-shards, remote-s3,
 * checkpoint-boundary, validate-cache: its cap held within 10% of its target at a load of 25), and so do one whose
 * time is a sleep and a cap (validate-write: a 50 ms step, saves held to 40 MB/s; 14 s of CPU in its 55) and one
 * whose change is far beyond any load's noise (ci-workflow-ab-fail: three times the step).
 */
export const ALONE = new Set([
  'e2e/checkpoints', // the checkpoint stall against the job run without the tool
  'e2e/ci-workflow', // the pull request's profile against main's baseline, a run apart
  'e2e/ci-workflow-ab', // paired rounds hold a drift, not a neighbour's burst on one round (A/A read +45% at load 21)
  'e2e/known-cost', // the split against the emulator's settings
  'e2e/matrix-cells', // whatif --matrix within 15% of validate runs
  'e2e/memory-cgroup', // its cold mode outlasts the cache's share of an epoch: the keeper's re-evictions lag under load (80.5% read)
  'e2e/pytorch', // the prep stall (two modes apart) against the script's own data timer
  'e2e/remote-s3-cap', // the fetch stall against the cap
  'e2e/validate-workers', // the second worker measured faster than the profile
  'emulator/job-compute', // the emulated compute against the clock
  'emulator/prep-clock', // a thread's CPU clock against a sleep
]);

/**
 * Side by side: the Python unit tests (their modules one at a time: python-unit.test.ts) in a run of their own from
 * the start, then, one at a time, the end-to-end files of BESIDE_PYTHON; beside that run, the other end-to-end files
 * and then the unit tests' processes, 3 at a time: 4 on 2 cores throughout, since most end-to-end files wait on their
 * jobs' emulated steps, throttles and sleeps (with 3 in all, a third of the CPU was idle: 253 s, 366 CPU-s; with 4,
 * 214 s, 352 CPU-s). The files after the Python tests even the two runs out.
 */
const SIDE_BY_SIDE = 3;
const PYTHON_UNIT = 'python-unit';
const BESIDE_PYTHON = ['e2e/continue', 'e2e/profile-failures'];

/**
 * The unit tests (neither end-to-end nor Python nor timed) run in this many processes, their files dealt out in turn:
 * a process a file cost 0.5 s of CPU each, 87 s of the 200 their 173 files took (109 s in one process).
 */
const UNIT_PROCESSES = 4;

/** `paths` dealt out in turn into `count` groups. */
function dealt(paths: string[], count: number): string[][] {
  return Array.from({ length: count }, (_, k) => paths.filter((_, i) => i % count === k)).filter((g) => g.length > 0);
}

/** Compiled test files under `dir`, sorted. */
function testFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.test.js'))
    .sort()
    .map((name) => join(dir, name));
}

/** The phases of a whole run, in order. */
export function testPlan(root = TEST_ROOT): Phase[] {
  const all = testFiles(root);
  const name = (path: string): string => relative(root, path).slice(0, -'.test.js'.length);
  const alone = all.filter((path) => ALONE.has(name(path)));
  const side = all.filter((path) => !alone.includes(path));
  const second = [PYTHON_UNIT, ...BESIDE_PYTHON].flatMap((n) => side.filter((path) => name(path) === n));
  const first = side.filter((path) => !second.includes(path));
  const endToEnd = first.filter((path) => name(path).startsWith('e2e/'));
  const units = first.filter((path) => !endToEnd.includes(path));
  const each = (paths: string[]) => paths.map((path) => [path]);
  return [
    {
      name: 'side-by-side',
      runs: [
        { groups: [...dealt(units, UNIT_PROCESSES), ...each(endToEnd)], concurrency: SIDE_BY_SIDE },
        { groups: each(second), concurrency: 1 },
      ],
    },
    { name: 'alone', runs: [{ groups: each(alone), concurrency: 1 }] },
  ].map((phase) => ({ ...phase, runs: phase.runs.filter((r) => r.groups.length > 0) })); // node --test with no file runs every file
}

/** Every test file of a run. */
export const filesOf = (run: Run): string[] => run.groups.flat();
