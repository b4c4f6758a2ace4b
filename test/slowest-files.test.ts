import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import slowestFiles from '../scripts/slowest-files.js';

/** The reporter's events for top-level tests of two files, and a subtest that does not count. */
async function* events() {
  const done = (file: string, ms: number, nesting = 0) => ({
    type: 'test:pass',
    data: { file: join(process.cwd(), file), nesting, details: { duration_ms: ms } },
  });
  yield done('a.test.js', 1000);
  yield done('b.test.js', 3000);
  yield done('a.test.js', 500);
  yield done('a.test.js', 9000, 1);
}

async function report(): Promise<string> {
  let text = '';
  for await (const chunk of slowestFiles(events())) text += chunk;
  return text;
}

test("the ten slowest files by their top-level tests' time, slowest first", async () => {
  delete process.env.DSA_SLOWEST_FILE;
  assert.equal(
    await report(),
    "# the 2 slowest test files (their tests' time, s):\n#       3.0  b.test.js\n#       1.5  a.test.js\n",
  );
});

test('with DSA_SLOWEST_FILE, every file is recorded there for the whole run to list, and nothing printed', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'dsa-slowest-'));
  t.after(() => {
    delete process.env.DSA_SLOWEST_FILE;
    rmSync(dir, { recursive: true, force: true });
  });
  process.env.DSA_SLOWEST_FILE = join(dir, 'times.tsv');
  assert.equal(await report(), '');
  assert.equal(await report(), '');
  const lines = readFileSync(join(dir, 'times.tsv'), 'utf8').trim().split('\n').sort();
  assert.deepEqual(lines, [
    `1500\t${join(process.cwd(), 'a.test.js')}`,
    `1500\t${join(process.cwd(), 'a.test.js')}`,
    `3000\t${join(process.cwd(), 'b.test.js')}`,
    `3000\t${join(process.cwd(), 'b.test.js')}`,
  ]);
});
