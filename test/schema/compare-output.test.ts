import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMPARE_OUTPUT_VERSION, CompareOutputSchema } from '../../src/schema/compare-output.js';
import { fixturePath } from '../gate/fixtures.js';
import { assertFollowsSchema, runJson } from './follows-schema.js';

const QUICK = fileURLToPath(new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'dsa-compare-schema-'));
after(() => rmSync(work, { recursive: true, force: true }));

// Within noise, beyond it, an unproven side, a side that lacks figures (a failed job).
const CASES: [string, string][] = [
  ['pass', 'pass-rerun'],
  ['pass', 'regressed'],
  ['pass', 'unproven-cold'],
  ['job-failed', 'fetch-bound'],
  ['hostile', 'prep-bound'],
];

for (const [a, b] of CASES) {
  test(`compare --json of ${a} and ${b} follows CompareOutputSchema`, async () => {
    const { exitCode, json } = await runJson(['compare', fixturePath(a), fixturePath(b), '--json'], work);
    assert.equal(exitCode, 0);
    const output = assertFollowsSchema(CompareOutputSchema, json, `compare --json (${a}, ${b})`);
    assert.equal(output.schemaVersion, COMPARE_OUTPUT_VERSION);
    assert.equal(output.kind, 'compare');
  });
}

test('compare --json of two jobs follows CompareOutputSchema', async () => {
  const { json } = await runJson(['compare', QUICK, fixturePath('pass'), '--json'], work);
  assertFollowsSchema(CompareOutputSchema, json, 'compare --json (emulated-quick, pass)');
});
