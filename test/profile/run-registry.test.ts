import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { once } from 'node:events';
import { ExitCode, UserError } from '../../src/errors.js';
import { registerRun } from '../../src/profile/run-registry.js';
import { runProfile } from '../../src/profile/run-profile.js';
import { run } from '../../src/cli/main.js';
import { fakeModeRunner, fakeProfileInput, type FakeJob } from './fake-mode-runner.js';
import { MemorySink } from '../support/memory-sink.js';
import { fakeIo } from '../cli/fake-io.js';

const JOB: FakeJob = {
  waitMs: { synthetic: 0, cached: 30, cold: 70 },
  stepMs: { synthetic: 100, cached: 100, cold: 110 },
  driftPerSec: 0,
  noise: 0.03,
  startupSec: 1,
  seed: 11,
};
const root = mkdtempSync(join(tmpdir(), 'dsa-registry-'));
const children: ChildProcess[] = [];
after(() => {
  for (const child of children) child.kill('SIGKILL');
});

/** Another process that registers a profile and keeps running until killed: a profile running beside the test. */
async function otherProfile(dir: string, profile: string): Promise<ChildProcess> {
  const module = new URL('../../src/profile/run-registry.js', import.meta.url).href;
  const script =
    `const { registerRun } = await import(${JSON.stringify(module)});` +
    `registerRun(${JSON.stringify(dir)}, ${JSON.stringify(profile)}, false); console.log('ready');` +
    'setInterval(() => {}, 1000);';
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  await once(child.stdout!, 'data');
  return child;
}

test("a second profile is refused with the first one's PID and profile; --allow-concurrent runs and both say so", async () => {
  const dir = join(root, 'registry-a');
  const first = await otherProfile(dir, '/data/profiles/first.json');
  assert.throws(
    () => registerRun(dir, '/data/profiles/second.json', false),
    (error: unknown) =>
      error instanceof UserError &&
      error.exitCode === ExitCode.Environment &&
      error.message.includes(`PID ${first.pid}`) &&
      error.message.includes('/data/profiles/first.json') &&
      error.message.includes('--allow-concurrent'),
  );
  const second = registerRun(dir, '/data/profiles/second.json', true);
  const warnings: string[] = [];
  second.noteNeighbours(warnings);
  second.noteNeighbours(warnings);
  assert.equal(warnings.length, 1, 'each neighbour is named once');
  assert.match(warnings[0], new RegExp(`PID ${first.pid}, writing /data/profiles/first.json`));
  // The first learns of the second from its own file, at its next save.
  const told = readFileSync(join(dir, `${first.pid}.beside`), 'utf8');
  assert.match(told, /second\.json/);
  second.release();
  assert.equal(existsSync(join(dir, `${process.pid}.json`)), false);
});

test("a killed profile's file is stale, not a lock: the next profile runs and removes it", async () => {
  const dir = join(root, 'registry-b');
  const first = await otherProfile(dir, '/p/killed.json');
  first.kill('SIGKILL');
  await once(first, 'exit');
  const next = registerRun(dir, '/p/next.json', false);
  assert.equal(existsSync(join(dir, `${first.pid}.json`)), false);
  next.release();
});

test('profile on the command line: refused before anything runs, exit 8, one line', async () => {
  const dir = join(root, 'registry-c');
  const first = await otherProfile(dir, '/p/running.json');
  const io = fakeIo(root, { ...process.env, DSA_RUN_REGISTRY: dir });
  const code = await run(['profile', '--data', root, '--out', join(root, 'x.json'), '--', 'true'], io);
  assert.equal(code, ExitCode.Environment, io.err);
  assert.match(io.err, new RegExp(`^ds-analyzer: another profile runs on this machine \\(PID ${first.pid}, `));
  assert.equal(io.err.trim().split('\n').length, 1);
});

test('a profile run beside another carries the words in its saved warnings', async () => {
  const dir = join(root, 'registry-d');
  const first = await otherProfile(dir, '/p/first.json');
  const input = fakeProfileInput(root, 'beside', fakeModeRunner(JOB).run, {
    sink: new MemorySink(),
    registry: { dir, allowConcurrent: true },
    passes: 1,
  });
  const { profile } = await runProfile(input, { onSignal: () => () => {} });
  assert.ok(profile.warnings.some((w) => w.includes(`PID ${first.pid}, writing /p/first.json`)));
  assert.equal(existsSync(join(dir, `${process.pid}.json`)), false, 'released when the profile ends');
});
