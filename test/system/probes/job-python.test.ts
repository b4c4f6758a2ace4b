import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jobPython } from '../../../src/system/probes/job-python.js';

/** A folder with a venv whose bin/python3 is an executable file, and an empty folder. */
function layout(): { root: string; venv: string; empty: string } {
  const root = mkdtempSync(join(tmpdir(), 'dsa-job-python-'));
  const venv = join(root, 'venv');
  mkdirSync(join(venv, 'bin'), { recursive: true });
  writeFileSync(join(venv, 'bin/python3'), '#!/bin/sh\n');
  chmodSync(join(venv, 'bin/python3'), 0o755);
  mkdirSync(join(root, 'empty'));
  return { root, venv, empty: join(root, 'empty') };
}

const SECURE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

test("under sudo, a python3 from sudo's secure_path is the system's: the warning names the user and both fixes", (t) => {
  const found = jobPython({ PATH: SECURE_PATH, SUDO_USER: 'alice' }, '/', 0);
  if (found.path === null) return t.skip('no python3 in the system folders here');
  assert.match(found.path, /^\/(usr\/)?(local\/)?s?bin\/python3$/);
  assert.equal(found.sudoUser, 'alice');
  assert.match(
    found.warning ?? '',
    /^running under sudo for alice: sudo's secure_path replaced alice's PATH, so python3 is \/.*python3, not the python3 of a venv/,
  );
  assert.match(found.warning ?? '', /sudo env "PATH=\$PATH" ds-analyzer .*--python ~\/venv\/bin\/python/);
});

test('under sudo with the user PATH kept, the venv python3 is found first and nothing is wrong', () => {
  const { root, venv } = layout();
  try {
    const found = jobPython({ PATH: `${venv}/bin:${SECURE_PATH}`, SUDO_USER: 'alice', VIRTUAL_ENV: venv }, '/', 0);
    assert.equal(found.path, join(venv, 'bin/python3'));
    assert.equal(found.virtualEnv, venv);
    assert.equal(found.warning, null);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('SUDO_USER without root (a shell sudo left behind) is not sudo, and a missing python3 is null', () => {
  const { root, empty } = layout();
  try {
    const found = jobPython({ PATH: empty, SUDO_USER: 'alice' }, '/', 1000);
    assert.equal(found.sudoUser, null);
    assert.equal(found.path, null);
    assert.equal(found.warning, null);
    const asRoot = jobPython({ PATH: empty, SUDO_USER: 'alice' }, '/', 0);
    assert.match(asRoot.warning ?? '', /so no python3 is on it/);
    // sudo from root to root keeps root's own PATH: nothing was lost.
    assert.equal(jobPython({ PATH: empty, SUDO_USER: 'root' }, '/', 0).sudoUser, null);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('VIRTUAL_ENV kept (sudo -E) while PATH lost it: the job would get another python3, and the warning says which fix', () => {
  const { root, venv, empty } = layout();
  try {
    const found = jobPython({ PATH: empty, SUDO_USER: 'alice', VIRTUAL_ENV: venv }, '/', 0);
    assert.match(
      found.warning ?? '',
      new RegExp(`^VIRTUAL_ENV is ${venv} but no python3 is on PATH: .*--python ${venv}/bin/python$`),
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('--python names the interpreter: it is looked up as given (relative to the working folder) and not second-guessed', () => {
  const { root, venv } = layout();
  try {
    const found = jobPython({ PATH: SECURE_PATH, SUDO_USER: 'alice' }, root, 0, 'venv/bin/python3');
    assert.equal(found.command, 'venv/bin/python3');
    assert.equal(found.path, join(venv, 'bin/python3'));
    assert.equal(found.warning, null);
    assert.equal(jobPython({ PATH: SECURE_PATH }, root, 0, 'venv/bin/nope').path, null);
    assert.ok(existsSync(found.path));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
