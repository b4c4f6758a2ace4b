/**
 * Which test files run side by side and which alone (run-tests.ts).
 *
 * Alone: the files that hold a measured time, an accuracy or a proof against
 * the machine (the job run without the tool, a prediction, a
 * block's share of bytes at its edges): a second file on the other core would
 * move what they measure. Everything else runs side by side: the unit tests
 * that hold no timing, and the end-to-end files that check behaviour (exit
 * codes, files, messages, processes left behind), each CLI run of them with a
 * run registry of its own (test/e2e/helpers.ts), so their real profiles do not
 * refuse each other.
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Files for one run of node's test runner, `concurrency` of them at a time. */
export interface Run {
  paths: string[];
  concurrency: number;
}

/** A phase: its runs go side by side (node's runner orders its files by name, so a long file gets a run of its own). */
export interface Phase {
  name: string;
  runs: Run[];
}

const TEST_ROOT = fileURLToPath(new URL('../test/', import.meta.url));

/** Files (test/NAME.test.ts) that run with nothing beside them. */
export const ALONE = new Set([
  'e2e/checkpoints', // the checkpoint and boundary stalls against the job run without the tool
  'e2e/ci-workflow', // the gate passes on main only with the cold mode proven
  'e2e/gate-against', // A/A passes and a slower candidate fails, on paired paces
  'e2e/known-cost', // the split against the emulator's settings; the overlap probe's proof
  'e2e/matrix-cells', // whatif --matrix within 15% of validate runs
  'e2e/multi-node', // the merged pace against the job's own meter
  'e2e/pytorch', // the prep stall against the script's own data timer
  'e2e/remote-fuse', // the modes proven from the daemon's socket bytes
  'e2e/remote-http-shards', // the modes proven at block edges
  'e2e/remote-https', // one launch: every mode proven at block edges
  'e2e/remote-s3', // one launch; the fetch stall against the cap; validate --latency
  'e2e/validate-cache', // the hit ratio held and predicted
  'e2e/validate-workers', // the second worker measured faster
  'e2e/validate-write', // whatif --write-bw against the job run there
  'emulator/job', // the emulated compute against the clock
  'emulator/prep-clock', // a thread's CPU clock against a sleep
]);

/**
 * Side by side: the Python unit tests (the longest file, its modules one at a time: python-unit.test.ts) in a run
 * of their own from the start, beside the other files 2 at a time: 3 on 2 cores, since most end-to-end files wait
 * on their jobs' emulated steps.
 */
const SIDE_BY_SIDE = 2;
const LONGEST = 'python-unit.test.js';

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
  const isE2e = (path: string): boolean => name(path).startsWith('e2e/');
  const alone = all.filter((path) => ALONE.has(name(path)));
  const e2eSide = all.filter((path) => isE2e(path) && !alone.includes(path));
  const unit = all.filter((path) => !isE2e(path) && !alone.includes(path));
  const longest = unit.filter((path) => path.endsWith(`/${LONGEST}`));
  return [
    {
      name: 'side-by-side',
      runs: [
        { paths: [...e2eSide, ...unit.filter((path) => !longest.includes(path))], concurrency: SIDE_BY_SIDE },
        { paths: longest, concurrency: 1 },
      ],
    },
    { name: 'alone', runs: [{ paths: alone, concurrency: 1 }] },
  ].map((phase) => ({ ...phase, runs: phase.runs.filter((r) => r.paths.length > 0) })); // node --test with no file runs every file
}
