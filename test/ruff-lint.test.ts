/**
 * The Python half of `npm run lint` (scripts/ruff.mjs, Ruff with ruff.toml) fails on a lint finding and on a file
 * not formatted, names each with file:line:column and its code; `--write` formats and sorts the imports. That this
 * checkout passes is `npm run lint`'s to say (CI runs it before the tests).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

// Run from dist/test/: the repository root is two folders up.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = join(ROOT, 'scripts', 'ruff.mjs');

/** A tree with this checkout's ruff.toml and `files` (paths under the root). */
function tree(t: { after: (fn: () => void) => void }, files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'ruff-lint-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  copyFileSync(join(ROOT, 'ruff.toml'), join(root, 'ruff.toml'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

function ruff(root: string, ...args: string[]) {
  const run = spawnSync(process.execPath, [SCRIPT, '--root', root, ...args], { encoding: 'utf8' });
  return { code: run.status, out: run.stdout + run.stderr };
}

test('an unused import and a file not formatted fail the check, each named', (t) => {
  const root = tree(t, { 'python/pkg/bad.py': 'import os\nx = {"a":1}\n', 'test/python/good.py': 'x = 1\n' });
  const run = ruff(root);
  assert.equal(run.code, 1, run.out);
  assert.match(run.out, /^python\/pkg\/bad\.py:1:8: F401 `os` imported but unused$/m);
  assert.match(run.out, /^python\/pkg\/bad\.py: not formatted/m);
  assert.doesNotMatch(run.out, /good\.py/);
  assert.match(run.out, /: 2 Python files, [1-9]\d* findings$/m);
});

test('--write formats and sorts the imports (helpers before ds_analyzer in the tests), then the check passes', (t) => {
  const source =
    'import sys\nimport ds_analyzer\nfrom helpers import run_script\nimport os\nprint(sys,os,ds_analyzer,run_script)\n';
  const root = tree(t, { 'test/python/test_x.py': source });
  assert.equal(ruff(root, '--write').code, 0);
  const written = readFileSync(join(root, 'test/python/test_x.py'), 'utf8');
  assert.equal(
    written,
    'import os\nimport sys\n\nfrom helpers import run_script\n\nimport ds_analyzer\n\nprint(sys, os, ds_analyzer, run_script)\n',
  );
  assert.equal(ruff(root).code, 0);
});
