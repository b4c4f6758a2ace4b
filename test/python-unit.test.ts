import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';

/**
 * Runs the Python unit tests of python/ds_analyzer (test/python/) with the
 * interpreter that has torch on Debian: /usr/bin/python3 (the first python3 on
 * PATH may be another one). Tests needing torch skip themselves without it.
 * One subtest a module, one at a time: the unit files beside this one keep
 * the other core busy, and two modules at once made timings in them (a
 * replayed epoch's start) depend on the machine's load for no time saved.
 */
const PYTHON = '/usr/bin/python3';
const TEST_DIR = fileURLToPath(new URL('../../test/python', import.meta.url));
const MODULES = readdirSync(TEST_DIR)
  .filter((name) => /^test_.*\.py$/.test(name))
  .map((name) => name.slice(0, -'.py'.length))
  .sort();

describe('python unit tests of the ds_analyzer package', () => {
  for (const module of MODULES) {
    test(module, async (t) => {
      if (!existsSync(PYTHON)) return t.skip(`needs ${PYTHON}`);
      const result = await execa(PYTHON, ['-m', 'unittest', '-v', module], {
        cwd: TEST_DIR,
        reject: false,
        all: true,
        timeout: 900_000,
        env: { PYTHONDONTWRITEBYTECODE: '1' },
      });
      const summary = result.all
        .split('\n')
        .filter((line) => /^(Ran \d+ tests|OK|FAILED)/.test(line))
        .join('; ');
      t.diagnostic(summary);
      const skipped = result.all.split('\n').filter((line) => / skipped /.test(line));
      if (skipped.length) t.diagnostic(`skipped: ${skipped.length} (${skipped[0].replace(/.*skipped /, '')})`);
      assert.equal(result.exitCode, 0, result.all);
      assert.match(result.all, /^Ran [1-9]\d* tests?/m, 'the module ran tests');
    });
  }
});
