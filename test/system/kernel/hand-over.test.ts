import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { handOver } from '../../../src/system/kernel/hand-over.js';
import { lookupUser } from '../../../src/system/kernel/users.js';
import { ExitCode, UserError } from '../../../src/errors.js';

test('handOver gives a tree to a user, changes links without following them, and skips what is gone', (t) => {
  if (process.geteuid?.() !== 0) return t.skip('needs root to chown to another user');
  const nobody = lookupUser('nobody');
  if (nobody === null) return t.skip('no user nobody on this machine');
  const root = mkdtempSync(join(tmpdir(), 'dsa-hand-over-'));
  try {
    const outside = join(root, 'outside');
    writeFileSync(outside, 'not theirs');
    mkdirSync(join(root, 'run/events'), { recursive: true });
    writeFileSync(join(root, 'run/events/e.jsonl'), '{}\n');
    symlinkSync(outside, join(root, 'run/link'));
    writeFileSync(join(root, 'profile.json'), '{}');
    handOver([join(root, 'profile.json'), join(root, 'missing.json')], nobody, { recursive: false });
    handOver([join(root, 'run')], nobody, { recursive: true });
    for (const path of ['profile.json', 'run', 'run/events', 'run/events/e.jsonl']) {
      const stat = statSync(join(root, path));
      assert.deepEqual([stat.uid, stat.gid], [nobody.uid, nobody.gid], path);
    }
    assert.equal(lstatSync(join(root, 'run/link')).uid, nobody.uid);
    assert.equal(statSync(outside).uid, 0, "a link's target is not handed over");
    assert.equal(statSync(root).uid, 0, 'nothing above the paths given');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('lookupUser reads the name service by name and by uid; an unknown name is null', () => {
  const root = lookupUser('root');
  assert.equal(root?.uid, 0);
  assert.equal(root?.gid, 0);
  assert.ok(root?.groups.includes(0));
  assert.equal(lookupUser('0')?.name, 'root');
  assert.equal(lookupUser('no-such-user-dsa-32'), null);
});

test('a chown the file system refuses is a one-line Environment error naming the way out', (t) => {
  if (process.geteuid?.() === 0) return t.skip('root may chown anything here; the refusal is tested as a user');
  const root = mkdtempSync(join(tmpdir(), 'dsa-hand-over-'));
  try {
    writeFileSync(join(root, 'profile.json'), '{}');
    assert.throws(
      () => handOver([join(root, 'profile.json')], { uid: 0, gid: 0 }, { recursive: false }),
      (error: unknown) =>
        error instanceof UserError &&
        error.exitCode === ExitCode.Environment &&
        /^cannot give .*profile\.json to uid 0 \(EPERM\): .*--as-user root$/.test(error.message),
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
