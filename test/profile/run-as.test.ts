import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chooseRunAs, runAsArgv, runAsEnv } from '../../src/profile/run-as.js';
import { withPython } from '../../src/profile/python-flag.js';
import { ExitCode, UserError } from '../../src/errors.js';
import type { SystemUser } from '../../src/system/kernel/users.js';

const ALICE: SystemUser = { name: 'alice', uid: 1000, gid: 1000, groups: [1000, 44, 109], home: '/home/alice' };
const ROOT: SystemUser = { name: 'root', uid: 0, gid: 0, groups: [0], home: '/root' };
const users = (spec: string) => [ALICE, ROOT].find((u) => u.name === spec || String(u.uid) === spec) ?? null;

/** A PATH folder holding an executable setpriv, and one holding none. */
function pathWithSetpriv(): { root: string; withIt: string; without: string } {
  const root = mkdtempSync(join(tmpdir(), 'dsa-run-as-'));
  mkdirSync(join(root, 'bin'));
  mkdirSync(join(root, 'empty'));
  writeFileSync(join(root, 'bin/setpriv'), '#!/bin/sh\n');
  chmodSync(join(root, 'bin/setpriv'), 0o755);
  return { root, withIt: join(root, 'bin'), without: join(root, 'empty') };
}

function userError(fn: () => unknown, code: ExitCode, pattern: RegExp): void {
  assert.throws(
    fn,
    (error: unknown) => error instanceof UserError && error.exitCode === code && pattern.test(error.message),
  );
}

test('under sudo the job runs as SUDO_USER by default, and --as-user root keeps it root', () => {
  const { root, withIt } = pathWithSetpriv();
  try {
    const env = { PATH: withIt, SUDO_USER: 'alice' };
    const chosen = chooseRunAs({ flag: undefined, env, euid: 0, lookup: users });
    assert.equal(chosen?.name, 'alice');
    assert.equal(chosen?.setpriv, join(withIt, 'setpriv'));
    assert.equal(chooseRunAs({ flag: 'root', env, euid: 0, lookup: users }), null);
    assert.equal(chooseRunAs({ flag: '0', env, euid: 0, lookup: users }), null);
    // Root without sudo, or a user without root: nobody to switch to.
    assert.equal(chooseRunAs({ flag: undefined, env: { PATH: withIt }, euid: 0, lookup: users }), null);
    assert.equal(chooseRunAs({ flag: undefined, env, euid: 1000, lookup: users }), null);
    // By uid, as root without sudo.
    assert.equal(chooseRunAs({ flag: '1000', env: { PATH: withIt }, euid: 0, lookup: users })?.home, '/home/alice');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('--as-user errors: an unknown user, another user without root, and no setpriv each name the fix', () => {
  const { root, withIt, without } = pathWithSetpriv();
  try {
    userError(
      () => chooseRunAs({ flag: 'bob', env: { PATH: withIt }, euid: 0, lookup: users }),
      ExitCode.BadValue,
      /^--as-user bob: no such user on this machine/,
    );
    userError(
      () => chooseRunAs({ flag: 'root', env: { PATH: withIt }, euid: 1000, lookup: users }),
      ExitCode.Environment,
      /only root can start the job as another user: run ds-analyzer under sudo/,
    );
    userError(
      () => chooseRunAs({ flag: undefined, env: { PATH: without, SUDO_USER: 'alice' }, euid: 0, lookup: users }),
      ExitCode.Environment,
      /^under sudo, the job runs as alice \(SUDO_USER\): setpriv .*install util-linux, or pass --as-user root/,
    );
    // Asking for oneself is no switch, root or not.
    assert.equal(chooseRunAs({ flag: 'alice', env: { PATH: without }, euid: 1000, lookup: users }), null);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("the job's argv goes through setpriv with every group of the user, and its HOME, USER and LOGNAME are theirs", () => {
  const user = { ...ALICE, setpriv: '/usr/bin/setpriv' };
  assert.deepEqual(runAsArgv(user, ['python', 'train.py', '--', 'x']), [
    '/usr/bin/setpriv',
    '--reuid=1000',
    '--regid=1000',
    '--groups=1000,44,109',
    '--',
    'python',
    'train.py',
    '--',
    'x',
  ]);
  assert.deepEqual(runAsArgv({ ...user, groups: [] }, ['job']).slice(3), ['--clear-groups', '--', 'job']);
  assert.deepEqual(runAsEnv(user), { HOME: '/home/alice', USER: 'alice', LOGNAME: 'alice' });
});

test("--python puts the venv's bin first on PATH (once), sets VIRTUAL_ENV, and a missing interpreter is a one-line error", () => {
  const root = mkdtempSync(join(tmpdir(), 'dsa-python-flag-'));
  try {
    const venv = join(root, 'venv');
    mkdirSync(join(venv, 'bin'), { recursive: true });
    writeFileSync(join(venv, 'pyvenv.cfg'), 'home = /usr/bin\n');
    writeFileSync(join(venv, 'bin/python'), '#!/bin/sh\n');
    chmodSync(join(venv, 'bin/python'), 0o755);
    const env = withPython('venv/bin/python', { PATH: `/usr/bin:${venv}/bin:/bin`, HOME: '/root' }, root);
    assert.equal(env.PATH, `${venv}/bin:/usr/bin:/bin`);
    assert.equal(env.VIRTUAL_ENV, venv);
    assert.equal(env.HOME, '/root');
    assert.equal(withPython(join(venv, 'bin/python'), { PATH: '/bin' }, '/').CONDA_PREFIX, undefined);
    userError(
      () => withPython('venv/bin/python9', { PATH: '/bin' }, root),
      ExitCode.CommandNotFound,
      /^--python venv\/bin\/python9 was not found: give the interpreter's path/,
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
