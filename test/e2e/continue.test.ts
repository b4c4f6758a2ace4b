import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { readProfile } from '../../src/store/profile-store.js';
import { ExitCode } from '../../src/errors.js';
import { CLI, FIXTURES, PYTHON, processesMentioning, sleep, startCli, torchMissing } from './helpers.js';
import { freePort } from '../support/free-port.js';

/**
 * profile --continue rides the real run (issue 43): a deterministic CPU training run
 * (test/fixtures/continue-train.py: seeded shuffling and workers, dropout, BatchNorm, Adam, OneCycleLR, a
 * GradScaler, Python and NumPy draws) run plain and under the flag by the real CLI: the final state (weights,
 * buffers, Adam's state) hashes the same, every iteration after the blocks has the same loss bit for bit, the
 * run's checkpoints are its own, the profile is written while the job still trains, and the CLI exits with the
 * job's code.
 */
const SCRIPT = join(FIXTURES, 'continue-train.py');
const work = mkdtempSync(join(tmpdir(), 'dsa-e2e-continue-'));
const data = join(work, 'data');
// 160 files: 20 batches of 8 an epoch; the blocks take about 170 iterations of the run's 400.
const EPOCHS = '20';
const quick = ['--precision', '10%', '--min-iterations', '10', '--max-iterations', '30'];

let skipReason: string | null = null;
before(async () => {
  skipReason = await torchMissing();
  if (skipReason) return;
  mkdirSync(data, { recursive: true });
  for (let i = 0; i < 160; i++) writeFileSync(join(data, `f${String(i).padStart(4, '0')}.bin`), Buffer.alloc(256, i));
});

interface Run {
  losses: string[];
  hash: string;
}
const readRun = (path: string): Run => JSON.parse(readFileSync(path, 'utf8')) as Run;

/** The fixture's arguments; `dir` holds its results and checkpoints. */
const jobArgs = (dir: string, extra: string[] = []) => [
  SCRIPT,
  '--data',
  data,
  '--epochs',
  EPOCHS,
  '--step-ms',
  '10',
  '--out',
  join(dir, 'run.json'),
  '--save-dir',
  join(dir, 'ckpt'),
  ...extra,
];

let plainOnce: Promise<string> | undefined;
/** The plain run of the fixture as it is: run once, read by the tests that hold a continued run against it. */
const plainRun = (): Promise<string> => (plainOnce ??= plain('plain'));

async function plain(name: string): Promise<string> {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  const result = await execa(PYTHON, jobArgs(dir), { cwd: dir, reject: false });
  assert.equal(result.exitCode, 0, result.stderr);
  return dir;
}

/**
 * The plain run of two ranks (gloo), started as torchrun's workers would be (its environment, one OpenMP thread each
 * as torchrun sets for two or more) but without the launcher: the ranks' results are the same, and one Python with
 * torch fewer. A rank that fails ends the other, which would wait in init_process_group for 30 minutes.
 */
async function plainRanks(name: string, extra: string[]): Promise<string> {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  const base = {
    MASTER_ADDR: 'localhost',
    MASTER_PORT: String(await freePort()),
    WORLD_SIZE: '2',
    OMP_NUM_THREADS: '1',
  };
  const failed = new AbortController();
  const ranks = [0, 1].map(async (r) => {
    const env = { ...base, RANK: String(r), LOCAL_RANK: String(r), LOCAL_WORLD_SIZE: '2' };
    const options = { cwd: dir, env, reject: false, cancelSignal: failed.signal, forceKillAfterDelay: 2000 } as const;
    const result = await execa(PYTHON, jobArgs(dir, extra), options);
    if (result.exitCode !== 0) failed.abort();
    return result;
  });
  for (const result of await Promise.all(ranks)) assert.equal(result.exitCode, 0, result.stderr);
  return dir;
}

function continued(name: string, launcher: string[] = [PYTHON], extra: string[] = [], env?: Record<string, string>) {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  const out = join(dir, 'profile.json');
  const cli = startCli(
    ['profile', '--continue', '--data', data, '--out', out, ...quick, '--', ...launcher, ...jobArgs(dir, extra)],
    // A registry of its own: a profile of another suite on this machine does not refuse this one.
    { cwd: dir, env: { DSA_RUN_REGISTRY: join(work, 'registry'), ...env } },
  );
  return { dir, out, cli };
}

/** The plain run's losses are the continued run's with the synthetic blocks' (undone) iterations left out. */
function assertUnharmed(plainDir: string, contDir: string, file = 'run.json'): void {
  const a = readRun(join(plainDir, file));
  const b = readRun(join(contDir, file));
  assert.equal(b.hash, a.hash, 'the final weights, buffers and optimizer state are bit-identical');
  assert.ok(b.losses.length > a.losses.length, 'the synthetic blocks ran iterations of their own');
  // The blocks end within the first half of the run: every iteration after them is the plain run's, bit for bit.
  const after = Math.floor(a.losses.length / 2);
  assert.deepEqual(b.losses.slice(-after), a.losses.slice(-after));
}

test('--continue: the run ends bit-identical to the plain run, its checkpoints are its own, the profile is written while it trains', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const plainDir = await plainRun();
  const { dir, out, cli } = continued('continued');
  // The profile is complete before the job's end: the job writes run.json only once trained.
  let writtenWhileTraining = false;
  let ended = false;
  void cli.then(() => (ended = true));
  while (!ended && !writtenWhileTraining) {
    await sleep(100);
    writtenWhileTraining =
      existsSync(out) && readProfile(out).status === 'complete' && !existsSync(join(dir, 'run.json'));
  }
  const result = await cli;
  assert.equal(result.exitCode, ExitCode.Ok, result.all);
  assert.doesNotMatch(result.all, /^\s+at .+\(.+:\d+:\d+\)$/m, 'no stack trace');
  assert.ok(writtenWhileTraining, 'the profile was complete while the job still trained');
  assertUnharmed(plainDir, dir);
  assert.deepEqual(readdirSync(join(dir, 'ckpt')).sort(), readdirSync(join(plainDir, 'ckpt')).sort());
  const profile = readProfile(out);
  assert.deepEqual(Object.keys(profile.modes).sort(), ['cached', 'cold', 'synthetic']);
  const cost = profile.cost?.continued;
  assert.ok(cost, 'cost.continued');
  assert.equal(cost.jobExitCode, 0);
  assert.ok(cost.syntheticSec > 0 && cost.snapshotSec > 0 && cost.snapshotBytes > 0, JSON.stringify(cost));
  assert.ok(cost.runSec! > cost.blocksSec, 'the run went on after the blocks');
  assert.equal(cost.extraSec, cost.syntheticSec + cost.snapshotSec + cost.preparationSec + cost.coldExtraSec);
  // The real run's profile is a data point as any other: whatif, gate and compare read it.
  for (const args of [
    ['whatif', out, '--cache', '50%'],
    ['gate', out, '--baseline', out],
    ['compare', out, out],
  ]) {
    const run = await execa(process.execPath, [CLI, ...args], { cwd: dir, reject: false, all: true });
    assert.ok(run.exitCode === ExitCode.Ok || run.exitCode === ExitCode.GateFailed, `${args[0]}: ${run.all}`);
    assert.doesNotMatch(run.all ?? '', /internal error|^\s+at .+:\d+:\d+\)$/m, args[0]);
  }
});

test("--continue where the state cannot be held: the synthetic blocks train on real batches and are left out, said so; the CLI exits with the job's own exit code", async (t) => {
  if (skipReason) return t.skip(skipReason);
  const plainDir = await plainRun();
  // The job ends with exit code 3 once trained (after its results are written): the CLI passes it on.
  const { dir, out, cli } = continued('unheld', [PYTHON], ['--exit-code', '3'], { DSA_SNAPSHOT_SHARE: '0' });
  const result = await cli;
  assert.equal(result.exitCode, 3, result.all);
  assert.match(result.all, /the synthetic block trained on real batches, not replays/);
  const profile = readProfile(out);
  assert.equal(profile.cost?.continued?.jobExitCode, 3);
  assert.deepEqual(Object.keys(profile.modes).sort(), ['cached', 'cold']);
  assert.deepEqual(
    profile.cost?.continued?.refusedBlocks.map((b) => b.label),
    ['synthetic', 'synthetic-2'],
  );
  // The blocks trained for real, so their saves are the run's own too.
  assert.deepEqual(readdirSync(join(dir, 'ckpt')).sort(), readdirSync(join(plainDir, 'ckpt')).sort());
  // Nothing was replayed: the run is the plain run, every iteration of it.
  const a = readRun(join(plainDir, 'run.json'));
  const b = readRun(join(dir, 'run.json'));
  assert.equal(b.hash, a.hash);
  assert.deepEqual(b.losses, a.losses);
});

test('--continue: signals after the blocks reach the job as themselves, and the CLI exits with its code', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const { dir, out, cli } = continued('interrupted', [PYTHON], ['--epochs', '200']);
  let ended = false;
  void cli.then(() => (ended = true));
  while (!ended && !(existsSync(out) && readProfile(out).status === 'complete')) await sleep(100);
  assert.ok(!ended, 'the job trains on after the blocks');
  // Slurm's warning before a time limit: the job's own signal, passed on; the CLI does not stop.
  cli.kill('SIGUSR1');
  for (let waited = 0; !ended && !existsSync(join(dir, 'usr1')) && waited < 20_000; waited += 50) await sleep(50);
  assert.ok(!ended, 'SIGUSR1 reached the job, and neither it nor the CLI ended');
  // Ctrl-C reaches the job as SIGINT (not SIGTERM): it saves its checkpoint and exits 130, as the CLI then does.
  cli.kill('SIGINT');
  const result = await cli;
  assert.equal(result.exitCode, 130, result.all);
  assert.equal(readProfile(out).cost?.continued?.jobExitCode, 130);
  assert.ok(existsSync(join(dir, 'ckpt', 'interrupted.pt')), "the job's own Ctrl-C handler ran");
  assert.ok(!existsSync(join(dir, 'run.json')), 'the job was ended before its last epoch');
  assert.deepEqual(processesMentioning(dir), [], 'nothing of the job is left');
});

test('--continue under torchrun, two ranks (gloo): each rank restores its own, both end bit-identical', async (t) => {
  if (skipReason) return t.skip(skipReason);
  // torch 1.13's torchrun on Python 3.12 cannot map its default redirects (Std.NONE is not iterated): name one.
  // One node's rendezvous on a free port, not --standalone's fixed localhost:29400, which another torchrun on the
  // machine (pytorch-launch, side by side) would join.
  const rendezvous = ['--nnodes', '1', '--rdzv_backend', 'c10d', '--rdzv_endpoint', `localhost:${await freePort()}`];
  const launcher = [PYTHON, '-m', 'torch.distributed.run', ...rendezvous, '--rdzv_id', '1', '--nproc_per_node', '2'];
  launcher.push('--redirects', '1', '--tee', '1');
  // Each rank gets half of an epoch's batches: twice the epochs, so that the blocks end in the first half.
  const longer = ['--epochs', String(2 * Number(EPOCHS))];
  const plainDir = await plainRanks('ddp-plain', longer);
  const { dir, cli } = continued('ddp-continued', launcher, longer);
  const result = await cli;
  assert.equal(result.exitCode, ExitCode.Ok, result.all);
  for (const rank of [0, 1]) assertUnharmed(plainDir, dir, `run-rank${rank}.json`);
});
