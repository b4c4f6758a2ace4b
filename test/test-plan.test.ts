import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ALONE, testPlan } from '../scripts/test-plan.js';

const TEST_ROOT = fileURLToPath(new URL('./', import.meta.url));

test('every test file runs once: side by side or alone', () => {
  const phases = testPlan();
  assert.deepEqual(
    phases.map((p) => p.name),
    ['side-by-side', 'alone'],
  );
  const planned = phases.flatMap((p) => p.runs.flatMap((r) => r.paths)).sort();
  const files = readdirSync(TEST_ROOT, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.test.js'))
    .map((name) => join(TEST_ROOT, name))
    .sort();
  assert.deepEqual(planned, files);
  assert.deepEqual(
    phases[1].runs.map((r) => r.concurrency),
    [1],
    'the timed files run one at a time, in one run',
  );
});

test('each file named to run alone exists, so a renamed timed test does not slip in beside others', () => {
  for (const name of ALONE) assert.ok(existsSync(join(TEST_ROOT, `${name}.test.js`)), `test/${name}.test.ts`);
  const alone = testPlan()[1].runs[0].paths.map((path) => path.slice(TEST_ROOT.length, -'.test.js'.length));
  assert.deepEqual(alone.sort(), [...ALONE].sort());
});

test('the Python unit tests have a run of their own, evened out by a few end-to-end files one at a time', () => {
  const [first, second] = testPlan()[0].runs;
  const names = (paths: string[]) => paths.map((path) => path.slice(TEST_ROOT.length, -'.test.js'.length));
  assert.deepEqual(names(second.paths).sort(), [
    'e2e/checkpoint-boundary',
    'e2e/profile-failures',
    'e2e/remote-https',
    'e2e/remote-s3',
    'python-unit',
  ]);
  assert.equal(second.concurrency, 1);
  assert.ok(!names(first.paths).some((n) => names(second.paths).includes(n)), 'no file in both runs');
});
