/**
 * Which test files run side by side and which alone (run-tests.ts).
 *
 * Alone: the end-to-end files that hold a measured time, an accuracy or a
 * proof against the machine (the job run without the tool, a prediction, a
 * block's share of bytes at its edges): a second file on the other core would
 * move what they measure. Everything else runs side by side: the unit tests,
 * which hold no timing, and the end-to-end files that check behaviour (exit
 * codes, files, messages, processes left behind), each CLI run of them with a
 * run registry of its own (test/e2e/helpers.ts), so their real profiles do not
 * refuse each other.
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Phase {
  name: string;
  paths: string[];
  concurrency: number;
}

const TEST_ROOT = fileURLToPath(new URL('../test/', import.meta.url));

/** End-to-end files (test/e2e/NAME.test.ts) that run with nothing beside them. */
export const ALONE = new Set([
  'checkpoints', // the checkpoint and boundary stalls against the job run without the tool
  'known-cost', // the split against the emulator's settings; the overlap probe's proof
  'matrix-cells', // whatif --matrix within 15% of validate runs
  'multi-node', // the merged pace against the job's own meter
  'pytorch', // the prep stall against the script's own data timer
  'remote-fuse', // the modes proven from the daemon's socket bytes
  'remote-http-shards', // the modes proven at block edges
  'remote-https', // one launch: every mode proven at block edges
  'remote-s3', // one launch; the fetch stall against the cap; validate --latency
  'validate-cache', // the hit ratio held and predicted
  'validate-workers', // the second worker measured faster
  'validate-write', // whatif --write-bw against the job run there
]);

/**
 * Files side by side: 3 at a time on 2 cores, since most end-to-end files
 * wait on their jobs' emulated steps; the longest first (the Python unit
 * tests, then the end-to-end files), so the phase does not end on one file.
 */
const SIDE_BY_SIDE = 3;

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
  const e2eName = (path: string): string | null => {
    const rel = relative(root, path);
    return rel.startsWith('e2e/') ? rel.slice('e2e/'.length, -'.test.js'.length) : null;
  };
  const alone = all.filter((path) => ALONE.has(e2eName(path) ?? ''));
  const e2eSide = all.filter((path) => e2eName(path) !== null && !alone.includes(path));
  const unit = all.filter((path) => e2eName(path) === null);
  const python = unit.filter((path) => path.endsWith('python-unit.test.js'));
  return [
    {
      name: 'side-by-side',
      paths: [...python, ...e2eSide, ...unit.filter((path) => !python.includes(path))],
      concurrency: SIDE_BY_SIDE,
    },
    { name: 'alone', paths: alone, concurrency: 1 },
  ];
}
