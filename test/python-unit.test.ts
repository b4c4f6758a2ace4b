import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';

/**
 * Runs the Python unit tests of python/ds_analyzer (test/python/) with the
 * interpreter that has torch on Debian: /usr/bin/python3 (the first python3 on
 * PATH may be another one). Tests needing torch skip themselves without it.
 */
const PYTHON = '/usr/bin/python3';
const TEST_DIR = fileURLToPath(new URL('../../test/python', import.meta.url));

test('python unit tests of the ds_analyzer package', async (t) => {
  if (!existsSync(PYTHON)) {
    t.skip(`needs ${PYTHON}`);
    return;
  }
  const result = await execa(PYTHON, ['-m', 'unittest', 'discover', '-s', TEST_DIR, '-t', TEST_DIR, '-v'], {
    cwd: TEST_DIR,
    reject: false,
    all: true,
    timeout: 900_000,
    env: { PYTHONDONTWRITEBYTECODE: '1' },
  });
  const summary = result.all.split('\n').filter((line) => /^(Ran \d+ tests|OK|FAILED)/.test(line)).join('; ');
  t.diagnostic(summary);
  const skipped = result.all.split('\n').filter((line) => / skipped /.test(line));
  if (skipped.length) t.diagnostic(`skipped: ${skipped.length} (${skipped[0].replace(/.*skipped /, '')})`);
  assert.equal(result.exitCode, 0, result.all);
});
