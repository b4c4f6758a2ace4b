/**
 * The test command (npm test): the unit tests two files at a time, then the
 * end-to-end tests one at a time, each phase's ten slowest files (on stderr),
 * and one last line CI reads: "N passed, N failed". The end-to-end tests hold timings against the same job run without
 * the tool, so nothing runs beside them; the unit tests hold no timing that a
 * second file on the other core would disturb. Exit code 1 when a test failed
 * or a run could not finish.
 * Run: npm test  (or, once built, node dist/scripts/run-tests.js [unit|e2e])
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

const TEST_ROOT = fileURLToPath(new URL('../test/', import.meta.url));
const E2E = 'e2e';
// The ten slowest files of each phase, on stderr at its end (slowest-files.ts).
const SLOWEST_REPORTER = new URL('./slowest-files.js', import.meta.url).href;

interface Phase {
  name: string;
  paths: string[];
  concurrency: number;
}

interface Outcome {
  passed: number;
  failed: number;
  exitCode: number;
}

/** Runs node's test runner on `phase`, its output passed through, and counts from its summary. */
function run(phase: Phase): Promise<Outcome> {
  const args = [
    '--test',
    `--test-concurrency=${phase.concurrency}`,
    '--test-reporter=tap',
    '--test-reporter-destination=stdout',
    `--test-reporter=${SLOWEST_REPORTER}`,
    '--test-reporter-destination=stderr',
    ...phase.paths,
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const counts = { passed: 0, failed: 0 };
  // The summary's last "# pass N" and "# fail N" lines (diagnostics of a test may also start with "#").
  createInterface({ input: child.stdout }).on('line', (line) => {
    process.stdout.write(`${line}\n`);
    const pass = /^# pass (\d+)$/.exec(line);
    const fail = /^# fail (\d+)$/.exec(line);
    if (pass) counts.passed = Number(pass[1]);
    if (fail) counts.failed = Number(fail[1]);
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ ...counts, exitCode: code ?? 1 })));
}

const entries = readdirSync(TEST_ROOT, { withFileTypes: true });
const unit = entries
  .filter((e) => e.name !== E2E && (e.isDirectory() || e.name.endsWith('.test.js')))
  .map((e) => join(TEST_ROOT, e.name));
const phases: Phase[] = [
  { name: 'unit', paths: unit, concurrency: 2 },
  { name: E2E, paths: [join(TEST_ROOT, E2E)], concurrency: 1 },
];
const only = process.argv[2];
const chosen = only ? phases.filter((p) => p.name === only) : phases;
if (chosen.length === 0) {
  process.stderr.write(`run-tests: no phase '${only}': give unit or e2e, or nothing for both\n`);
  process.exit(2);
}
let passed = 0;
let failed = 0;
let exitCode = 0;
for (const phase of chosen) {
  const outcome = await run(phase);
  passed += outcome.passed;
  failed += outcome.failed;
  // A runner that ended badly without a failed test (a crash, a file that did not load) still fails the run.
  if (outcome.exitCode !== 0) exitCode = 1;
}
if (failed > 0) exitCode = 1;
process.stdout.write(`${passed} passed, ${failed} failed\n`);
process.exit(exitCode);
