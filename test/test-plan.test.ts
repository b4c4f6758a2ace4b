import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ALONE, filesOf, testPlan } from '../scripts/test-plan.js';

const TEST_ROOT = fileURLToPath(new URL('./', import.meta.url));

test('every test file runs once: side by side or alone', () => {
  const phases = testPlan();
  assert.deepEqual(
    phases.map((p) => p.name),
    ['side-by-side', 'alone'],
  );
  const planned = phases.flatMap((p) => p.runs.flatMap(filesOf)).sort();
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
  const alone = filesOf(testPlan()[1].runs[0]).map((path) => path.slice(TEST_ROOT.length, -'.test.js'.length));
  assert.deepEqual(alone.sort(), [...ALONE].sort());
});

test('the Python unit tests have a run of their own, evened out by a few end-to-end files one at a time', () => {
  const [first, second] = testPlan()[0].runs;
  const names = (paths: string[]) => paths.map((path) => path.slice(TEST_ROOT.length, -'.test.js'.length));
  assert.deepEqual(names(filesOf(second)).sort(), ['e2e/continue', 'e2e/profile-failures', 'python-unit']);
  assert.equal(second.concurrency, 1);
  assert.ok(!names(filesOf(first)).some((n) => names(filesOf(second)).includes(n)), 'no file in both runs');
});

test('the unit tests share a few processes; every end-to-end, Python and timed file has one of its own', () => {
  const phases = testPlan();
  const shared = phases.flatMap((p) => p.runs.flatMap((r) => r.groups.filter((g) => g.length > 1)));
  assert.ok(shared.length >= 2 && shared.length <= 8, `${shared.length} shared processes`);
  for (const path of shared.flat()) {
    const name = path.slice(TEST_ROOT.length, -'.test.js'.length);
    assert.ok(!name.startsWith('e2e/') && name !== 'python-unit' && !ALONE.has(name), name);
  }
  const sizes = shared.map((g) => g.length);
  assert.ok(Math.max(...sizes) - Math.min(...sizes) <= 1, `dealt out evenly: ${sizes.join(', ')}`);
  assert.deepEqual(
    phases[1].runs[0].groups.map((g) => g.length),
    phases[1].runs[0].groups.map(() => 1),
  );
});
