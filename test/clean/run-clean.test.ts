import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runClean, type CleanInput } from '../../src/clean/run-clean.js';
import { cleanCommandWith } from '../../src/cli/clean.js';
import { run } from '../../src/cli/main.js';
import { ExitCode } from '../../src/errors.js';
import { reclaimPauseFile, toolCacheDir } from '../../src/paths.js';
import { emptyCgroupState, fakeCgroupFs, type FakeCgroupState } from '../support/fake-cgroup-fs.js';
import { ownerPidOf, parsePids } from '../../src/system/cgroups/leftovers.js';
import { fakeIo } from '../cli/fake-io.js';

const made: string[] = [];
after(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

const ROOT = '/fake/cgroup/blkio';
const DEAD = 4_000_001;
const ALIVE = 4_000_002;

/** A machine a killed profile left: a temp HOME and working folder, and a fake cgroup root. */
function leftBehind(): { input: CleanInput; state: FakeCgroupState; home: string; cwd: string; switchFile: string } {
  const home = mkdtempSync(join(tmpdir(), 'dsa-clean-home-'));
  const cwd = mkdtempSync(join(tmpdir(), 'dsa-clean-cwd-'));
  made.push(home, cwd);
  const env = { HOME: home };
  // The demo's dataset, a profile with its artefacts, a validate work folder.
  mkdirSync(join(toolCacheDir(env), 'demo-2048x131072'), { recursive: true });
  writeFileSync(join(toolCacheDir(env), 'demo-2048x131072', 'sample-00000.bin'), Buffer.alloc(1000));
  mkdirSync(join(cwd, 'profiles', 'job-20250101T000000.d', 'cold'), { recursive: true });
  writeFileSync(join(cwd, 'profiles', 'job-20250101T000000.json'), '{}');
  writeFileSync(join(cwd, 'profiles', 'job-20250101T000000.d', 'cold', 'stdout.log'), 'x'.repeat(500));
  mkdirSync(join(cwd, 'reports', 'validate-1700000000000'), { recursive: true });
  mkdirSync(join(cwd, 'reports', 'job-report'), { recursive: true });
  // DAMON paused by a run that died with its guardian: the switch is off, the record says it was on.
  const switchFile = join(home, 'kdamond-0-state');
  writeFileSync(switchFile, 'off\n');
  mkdirSync(toolCacheDir(env), { recursive: true });
  writeFileSync(
    reclaimPauseFile(env),
    JSON.stringify({ pid: DEAD, switches: [{ name: 'kdamond 0', file: switchFile, on: 'on' }] }),
  );
  const state = emptyCgroupState();
  state.groups.set(`${ROOT}/ds-analyzer-${DEAD}`, []);
  state.groups.set(`${ROOT}/ds-analyzer-validate-${DEAD}-bw-1`, [77]);
  state.groups.set(`${ROOT}/ds-analyzer-${ALIVE}`, []);
  state.groups.set(`${ROOT}/someone-else`, []);
  state.commands.set(77, 'python train.py --data /data');
  state.commands.set(ALIVE, 'node dist/bin/ds-analyzer.js profile -- python train.py');
  const input: CleanInput = {
    cgroupRoots: [ROOT],
    cgroupFs: fakeCgroupFs(state),
    reclaimPauseFile: reclaimPauseFile(env),
    cacheDir: toolCacheDir(env),
    profilesDir: join(cwd, 'profiles'),
    reportsDir: join(cwd, 'reports'),
    dryRun: false,
    force: false,
    cache: false,
    artifacts: false,
  };
  return { input, state, home, cwd, switchFile };
}

test('job cgroup names give the pid of the CLI that made them; cgroup.procs parses one pid a line', () => {
  assert.equal(ownerPidOf('ds-analyzer-1234'), 1234);
  assert.equal(ownerPidOf('ds-analyzer-validate-1234'), 1234);
  assert.equal(ownerPidOf('ds-analyzer-validate-1234-bw-3'), 1234);
  // validate's write points (run-validate.ts measureWritePoint): a live validate's group is in use, not a killed run's.
  assert.equal(ownerPidOf('ds-analyzer-validate-1234-write-2'), 1234);
  assert.equal(ownerPidOf('ds-analyzer-doctor-99'), 99);
  assert.equal(ownerPidOf('ds-analyzer-job'), null);
  assert.deepEqual(parsePids('12\n345\n\n'), [12, 345]);
});

test('by default clean removes the empty groups of dead runs and restores DAMON, keeps what is in use or still holds processes, and removes no file', async () => {
  const { input, state, switchFile, cwd } = leftBehind();
  const result = await runClean(input);
  const lines = result.items.map((i) => `${i.kind} ${i.outcome}: ${i.text}`);
  assert.equal(result.failed, false, lines.join('\n'));
  assert.ok(!state.groups.has(`${ROOT}/ds-analyzer-${DEAD}`), 'the empty left group is gone');
  assert.ok(
    state.groups.has(`${ROOT}/ds-analyzer-validate-${DEAD}-bw-1`),
    'a group with processes is kept without --force',
  );
  assert.ok(state.groups.has(`${ROOT}/ds-analyzer-${ALIVE}`), "a running CLI's group is kept");
  assert.ok(state.groups.has(`${ROOT}/someone-else`), 'groups not ours are never looked at');
  assert.deepEqual(state.killed, []);
  assert.equal(readFileSync(switchFile, 'utf8'), 'on', 'DAMON is back on');
  assert.ok(!existsSync(input.reclaimPauseFile), 'the record is gone with the pause');
  assert.ok(existsSync(join(input.cacheDir, 'demo-2048x131072')));
  assert.ok(existsSync(join(cwd, 'profiles', 'job-20250101T000000.d')));
  assert.ok(existsSync(join(cwd, 'reports', 'validate-1700000000000')));
  const text = lines.join('\n');
  assert.match(text, /cgroup done: removed the empty cgroup \/fake\/cgroup\/blkio\/ds-analyzer-4000001/);
  assert.match(
    text,
    /cgroup kept: kept the cgroup .*bw-1: 1 process of a killed run still in it \(77 python train\.py --data \/data\); stop it, or run 'ds-analyzer clean --force'/,
  );
  assert.match(text, /cgroup kept: kept the cgroup .*ds-analyzer-4000002: the process that made it still runs/);
  assert.match(
    text,
    /reclaim done: turned DAMON's reclaim back on \(kdamond 0\), paused by ds-analyzer 4000001, which is gone/,
  );
  assert.match(
    text,
    /cache kept: kept the demo dataset .*demo-2048x131072 \(1000 B\): 'ds-analyzer clean --cache' removes it/,
  );
  assert.match(text, /artefacts kept: kept the profile's artefacts .*job-20250101T000000\.d \(500 B\)/);
  assert.match(text, /artefacts kept: kept validate's work folder .*validate-1700000000000/);
  assert.doesNotMatch(text, /job-report/, 'a report folder is not an artefact folder');
  // A second run finds the machine as it was.
  const again = await runClean(input);
  assert.match(again.items.find((i) => i.kind === 'reclaim')!.text, /no reclaim pause left behind/);
});

test('--dry-run says what it would do and changes nothing', async () => {
  const { input, state, switchFile } = leftBehind();
  const result = await runClean({ ...input, dryRun: true, force: true, cache: true, artifacts: true });
  assert.equal(state.groups.size, 4);
  assert.deepEqual(state.killed, []);
  assert.equal(readFileSync(switchFile, 'utf8'), 'off\n');
  assert.ok(existsSync(input.reclaimPauseFile));
  assert.ok(existsSync(join(input.cacheDir, 'demo-2048x131072')));
  assert.ok(result.items.filter((i) => i.outcome === 'would').length >= 5);
  assert.ok(result.items.every((i) => i.outcome !== 'done'));
});

test("--force kills the processes left in a dead run's group, then removes it; --cache and --artifacts remove the files, the profiles stay", async () => {
  const { input, state, cwd } = leftBehind();
  const result = await runClean({ ...input, force: true, cache: true, artifacts: true });
  assert.equal(result.failed, false);
  assert.deepEqual(state.killed, [77], 'only the process inside the left group');
  assert.ok(!state.groups.has(`${ROOT}/ds-analyzer-validate-${DEAD}-bw-1`));
  assert.ok(state.groups.has(`${ROOT}/ds-analyzer-${ALIVE}`), '--force never touches a group whose CLI still runs');
  assert.ok(!existsSync(join(input.cacheDir, 'demo-2048x131072')));
  assert.ok(!existsSync(join(cwd, 'profiles', 'job-20250101T000000.d')));
  assert.ok(!existsSync(join(cwd, 'reports', 'validate-1700000000000')));
  assert.ok(existsSync(join(cwd, 'profiles', 'job-20250101T000000.json')), 'the profile itself is kept');
  assert.ok(existsSync(join(cwd, 'reports', 'job-report')));
});

test("a killed profile's copy of remote data is named as the dataset copy it is, and --cache removes it", async () => {
  const { input, cwd } = leftBehind();
  const copy = join(cwd, 'profiles', 'job-20250101T000000.d', 'remote-cache');
  mkdirSync(copy);
  writeFileSync(join(copy, 'da39a3ee5e6b4b0d3255bfef95601890afd80709'), Buffer.alloc(3000));
  const kept = (await runClean(input)).items.find((i) => i.path === copy);
  assert.equal(kept?.kind, 'cache');
  assert.equal(kept?.outcome, 'kept');
  assert.equal(kept?.bytes, 3000);
  assert.match(kept?.text ?? '', /^kept a copy of remote data .*remote-cache \(2\.9 KiB\).*clean --cache' removes it/);
  const removed = (await runClean({ ...input, cache: true })).items.find((i) => i.path === copy);
  assert.equal(removed?.outcome, 'done');
  assert.ok(!existsSync(copy), 'the copy is gone');
  assert.ok(existsSync(join(cwd, 'profiles', 'job-20250101T000000.d', 'cold')), 'the logs stay without --artifacts');
});

test('what cannot be removed or restored is a failed line naming the fix; a pause whose run still goes on is kept', async () => {
  const { input, state } = leftBehind();
  state.refuse.set(`${ROOT}/ds-analyzer-${DEAD}`, 'EACCES');
  writeFileSync(
    input.reclaimPauseFile,
    JSON.stringify({ pid: ALIVE, switches: [{ name: 'kdamond 0', file: '/nonexistent/state', on: 'on' }] }),
  );
  const result = await runClean(input);
  assert.equal(result.failed, true);
  assert.match(
    result.items.find((i) => i.outcome === 'failed')!.text,
    /could not remove the cgroup .*ds-analyzer-4000001 \(EACCES\): remove it as root/,
  );
  assert.match(
    result.items.find((i) => i.kind === 'reclaim')!.text,
    /paused by a run that still goes on \(4000002 node/,
  );
  writeFileSync(input.reclaimPauseFile, 'not json');
  assert.match((await runClean(input)).items.find((i) => i.kind === 'reclaim')!.text, /does not parse/);
});

test('ds-analyzer clean prints one line per thing and exits 0; 8 when something could not be done', async () => {
  const { state, home, cwd } = leftBehind();
  const machine = { cgroupRoots: () => [ROOT], cgroupFs: fakeCgroupFs(state) };
  const io = fakeIo(cwd, { HOME: home });
  assert.equal(await run(['clean'], io, [cleanCommandWith(machine)]), ExitCode.Ok, io.err);
  assert.equal(io.err, '');
  assert.match(io.out, /^removed the empty cgroup/m);
  assert.match(io.out, /^turned DAMON's reclaim back on/m);
  assert.match(io.out, /^page cache: nothing to restore/m);
  state.refuse.set(`${ROOT}/ds-analyzer-validate-${DEAD}-bw-1`, 'EACCES');
  const forced = fakeIo(cwd, { HOME: home });
  assert.equal(await run(['clean', '--force'], forced, [cleanCommandWith(machine)]), ExitCode.Environment);
  assert.doesNotMatch(forced.out + forced.err, /\bat .+:\d+:\d+\)?$/m, 'no stack trace');
});
