/**
 * profile under sudo (issue 32): the job runs as SUDO_USER, in its groups and
 * with its HOME, while the profiler keeps root; what the run wrote is theirs.
 * Needs root; the user is `nobody`, which every Linux has.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateDataset } from '../../src/emulator/generate-dataset.js';
import { readProfile } from '../../src/store/profile-store.js';
import { lookupUser, type SystemUser } from '../../src/system/kernel/users.js';
import { emulatorArgv, startCli } from './helpers.js';

const work = mkdtempSync(join(tmpdir(), 'dsa-e2e-run-as-'));
const data = join(work, 'data');
const quick = [
  '--modes',
  'synthetic,cached',
  '--single-pass',
  '--precision',
  '20%',
  '--min-iterations',
  '10',
  '--max-iterations',
  '60',
];
const fast = ['--batch-size', '4', '--workers', '1', '--compute-ms', '2', '--prep-ms', '1'];
let nobody: SystemUser | null = null;
let skipReason: string | null = null;

before(async () => {
  if (process.geteuid?.() !== 0) {
    skipReason = 'needs root: the job is started as another user';
    return;
  }
  nobody = lookupUser('nobody');
  if (nobody === null) skipReason = 'no user nobody on this machine';
  await generateDataset(data, { files: 16, fileBytes: 16 << 10, seed: 32 });
  // nobody reaches the job's folder and data only where the temp folder lets it.
  chmodSync(work, 0o755);
  chmodSync(data, 0o755);
});

/** The job's argv: it prints who it runs as (uid, groups, HOME) on its stdout, then becomes the emulated job. */
function whoAmIThen(argv: string[]): string[] {
  return ['sh', '-c', 'echo "who: $(id -u) $(id -g) $HOME"; exec "$@"', 'sh', ...argv];
}

/** What the job printed of itself in each of its launches' stdout logs. */
function whoLines(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('stdout.log'))
    .flatMap((path) =>
      readFileSync(join(dir, path), 'utf8')
        .split('\n')
        .filter((line) => line.startsWith('who: ')),
    );
}

test('under sudo the job runs as SUDO_USER and the profile, its folder and a new profiles folder are theirs', async (t) => {
  if (skipReason || !nobody) return t.skip(skipReason ?? '');
  const out = join(work, 'new-folder', 'as-sudo-user.json');
  const result = await startCli(
    ['profile', '--data', data, '--out', out, ...quick, '--', ...whoAmIThen(emulatorArgv(data, fast))],
    {
      cwd: work,
      env: { SUDO_USER: 'nobody', SUDO_UID: String(nobody.uid) },
    },
  );
  assert.equal(result.exitCode, 0, result.all);
  assert.match(
    result.all,
    new RegExp(
      `note: the job runs as nobody \\(uid ${nobody.uid}\\), who ran sudo; the profile and its folder are theirs`,
    ),
  );
  assert.equal(readProfile(out).status, 'complete');
  const lines = whoLines(join(work, 'new-folder', 'as-sudo-user.d'));
  assert.ok(lines.length > 0, 'the job printed who it ran as');
  for (const line of lines) assert.equal(line, `who: ${nobody.uid} ${nobody.gid} ${nobody.home}`);
  for (const path of [out, join(work, 'new-folder'), join(work, 'new-folder', 'as-sudo-user.d')]) {
    assert.equal(statSync(path).uid, nobody.uid, `${path} is the user's`);
  }
  assert.equal(statSync(work).uid, 0, 'a folder the run did not make keeps its owner');
});

test('--as-user root keeps the job root under sudo, and its files root', async (t) => {
  if (skipReason || !nobody) return t.skip(skipReason ?? '');
  const out = join(work, 'as-root.json');
  const result = await startCli(
    [
      'profile',
      '--as-user',
      'root',
      '--data',
      data,
      '--out',
      out,
      ...quick,
      '--',
      ...whoAmIThen(emulatorArgv(data, fast)),
    ],
    {
      cwd: work,
      env: { SUDO_USER: 'nobody', SUDO_UID: String(nobody.uid) },
    },
  );
  assert.equal(result.exitCode, 0, result.all);
  const lines = whoLines(join(work, 'as-root.d'));
  assert.ok(lines.length > 0 && lines.every((line) => line.startsWith('who: 0 0 ')), lines.join('\n'));
  assert.equal(statSync(out).uid, 0);
});
