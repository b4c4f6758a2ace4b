/**
 * gate --against (A/B in one run) on the known-cost emulator: the same job
 * against itself passes; a candidate whose accelerator step takes four times as
 * long fails with exit 1. Behaviour, not speed: no time is asserted, and the
 * change is far beyond the noise of 4 pairs of 20-iteration rounds beside other
 * files (a twice-as-long step once read +65%, 95% -11% to +206%, references at
 * 5.3 to 8.8 ms a sample). Its bad command lines (a missing candidate command among them) are one-line errors
 * before any job runs: test/gate/against-cli.test.ts, in-process.
 */
import assert from 'node:assert/strict';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { generateDataset } from '../../src/emulator/generate-dataset.js';
import { ExitCode } from '../../src/errors.js';
import { lookupUser } from '../../src/system/kernel/users.js';
import { execa } from 'execa';
import { emulatorArgv, sleep, startCli } from './helpers.js';

const work = mkdtempSync(join(tmpdir(), 'dsa-e2e-against-'));
const data = join(work, 'data');
const job = (computeMs: number) =>
  emulatorArgv(data, ['--batch-size', '4', '--compute-ms', String(computeMs), '--prep-ms', '1']);
/** The reference as one string, as a user types it (the emulator's path holds no blank or quote). */
const reference = job(20).join(' ');
const env = { ...process.env, DSA_RUN_REGISTRY: join(work, 'runs') };
const quick = ['--rounds', '4', '--max-iterations', '20', '--data', data];

before(async () => {
  // 256 samples: a round's 20 iterations of 4 (and its warm-up) read each sample once, so every round's cold state is proven.
  await generateDataset(data, { files: 256, fileBytes: 16 << 10, seed: 4 });
});

test('gate --against: the job against itself passes, each round profiled and the comparison written', async () => {
  const out = join(work, 'aa');
  const result = await startCli(['gate', '--against', reference, ...quick, '--out-dir', out, '--', ...job(20)], {
    cwd: work,
    env,
  });
  assert.equal(result.exitCode, ExitCode.Ok, result.all);
  assert.match(result.all, /gate PASSED/);
  assert.match(result.all, /judged on 4 pairs of adjacent rounds run A B B A/);
  assert.doesNotMatch(result.all, /\bat .+:\d+:\d+\)?$/m, 'no stack trace');
  const rounds = readdirSync(out).filter((f) => /^round-\d\d-(reference|candidate)\.json$/.test(f));
  assert.deepEqual(
    rounds.sort().map((f) => f.slice(9, 10)),
    ['r', 'c', 'c', 'r', 'r', 'c', 'c', 'r'],
  );
  const comparison = JSON.parse(readFileSync(join(out, 'comparison.json'), 'utf8'));
  assert.equal(comparison.exitCode, ExitCode.Ok);
  assert.equal(comparison.against.rounds.length, 8);
  assert.equal(comparison.against.change.pairs, 4);
});

test('gate --against: a candidate with a four-times-as-long accelerator step fails with exit 1 and its interval', async () => {
  const out = join(work, 'ab');
  const junit = join(work, 'ab.xml');
  const result = await startCli(
    ['gate', '--against', reference, ...quick, '--out-dir', out, '--junit', junit, '--json', '--', ...job(80)],
    { cwd: work, env },
  );
  assert.equal(result.exitCode, ExitCode.GateFailed, result.all);
  const verdict = JSON.parse(result.stdout as string);
  assert.equal(verdict.kind, 'gate');
  assert.equal(verdict.rules[0].result, 'fail');
  assert.ok(verdict.rules[0].value > 0.1, `the candidate's change ${verdict.rules[0].value}`);
  assert.ok(verdict.against.change.low > 0.05, JSON.stringify(verdict.against.change));
  assert.ok(existsSync(junit), 'the JUnit file is written');
});

test('gate --against passes --python and --as-user on to every round, and runs no storage probe after one', async (t) => {
  const nobody = process.geteuid?.() === 0 ? lookupUser('nobody') : null;
  if (!nobody) return t.skip('needs root and the user nobody: the rounds start the jobs as another user');
  // A venv the job's python resolves in, and a wrapper that prints who the job runs as and in which environment.
  const venv = join(work, 'venv');
  mkdirSync(join(venv, 'bin'), { recursive: true });
  writeFileSync(join(venv, 'pyvenv.cfg'), 'home = /usr/bin\n');
  symlinkSync('/usr/bin/python3', join(venv, 'bin', 'python'));
  writeFileSync(join(work, 'who.sh'), 'echo "who: $(id -u) venv: $VIRTUAL_ENV $(command -v python)"; exec "$@"\n');
  for (const dir of [work, data]) chmodSync(dir, 0o755);
  // An --out-dir that was there keeps its owner and what it held; only the rounds' files are handed over.
  const out = join(work, 'as-user');
  mkdirSync(out);
  writeFileSync(join(out, 'kept.txt'), 'root');
  const flags = ['--python', join(venv, 'bin', 'python'), '--as-user', 'nobody', '--out-dir', out];
  const result = await startCli(
    [
      'gate',
      '--against',
      `sh who.sh ${reference}`,
      ...quick,
      '--rounds',
      '2',
      ...flags,
      '--',
      'sh',
      'who.sh',
      ...job(20),
    ],
    { cwd: work, env },
  );
  assert.equal(result.exitCode, ExitCode.Ok, result.all);
  assert.match(result.all, /note: the job runs as nobody \(uid \d+, --as-user\)/);
  const rounds = readdirSync(out).filter((f) => /^round-\d\d-\w+\.json$/.test(f));
  assert.equal(rounds.length, 4);
  for (const round of rounds) {
    const logs = readdirSync(join(out, round.replace(/\.json$/, '.d')), { recursive: true, encoding: 'utf8' });
    const lines = logs
      .filter((path) => path.endsWith('stdout.log'))
      .flatMap((path) => readFileSync(join(out, round.replace(/\.json$/, '.d'), path), 'utf8').split('\n'))
      .filter((line) => line.startsWith('who: '));
    assert.deepEqual(lines, [`who: ${nobody.uid} venv: ${venv} ${join(venv, 'bin', 'python')}`], round);
    const profile = JSON.parse(readFileSync(join(out, round), 'utf8'));
    assert.equal(profile.storageProbe, undefined, `${round}: no storage probe after a round`);
    assert.equal(statSync(join(out, round)).uid, nobody.uid, `${round} is the user's`);
  }
  assert.equal(statSync(join(out, 'comparison.json')).uid, nobody.uid, "the comparison is the user's");
  assert.equal(statSync(join(out, 'kept.txt')).uid, 0, 'a file that was there keeps its owner');
  assert.equal(statSync(out).uid, 0, 'the folder that was there keeps its owner');
});

test('gate --against --epochs later runs both versions at once in slices: itself passes, a twice-as-long step fails', async () => {
  const sliced = ['--epochs', 'later', '--rounds', '2', '--max-iterations', '20', '--data', data];
  const same = await startCli(
    ['gate', '--against', reference, ...sliced, '--out-dir', join(work, 'sliced-aa'), '--', ...job(20)],
    {
      cwd: work,
      env,
    },
  );
  assert.equal(same.exitCode, ExitCode.Ok, same.all);
  assert.match(same.all, /judged over 2 rounds of both versions at once/);
  assert.match(
    same.all,
    /round 2\/2: [\d.]+ → [\d.]+ ms\/sample \(reference → candidate\), [+−][\d.]+% \(95%: .+\) over its \d+ pairs of slices/,
  );
  assert.match(same.all, /without address-space randomisation|address-space randomisation stays on/);
  const out = join(work, 'sliced-ab');
  // Slices hold 30 of the slower iterations (at least 1 s): a 40 ms step keeps them near 1 s.
  const slower = await startCli(['gate', '--against', reference, ...sliced, '--out-dir', out, '--', ...job(40)], {
    cwd: work,
    env,
  });
  assert.equal(slower.exitCode, ExitCode.GateFailed, slower.all);
  const comparison = JSON.parse(readFileSync(join(out, 'comparison.json'), 'utf8'));
  assert.ok(comparison.against.change.low > 0.05, JSON.stringify(comparison.against.change));
  assert.deepEqual(
    comparison.against.rounds.map((r: { round: number; arm: string }) => `${r.round}${r.arm[0]}`),
    ['1r', '1c', '2c', '2r'],
  );
  // In launch order: the candidate's job was launched first in round 2.
  const started = (arm: string) =>
    JSON.parse(readFileSync(join(out, `round-02-${arm}.json`), 'utf8')).modes.cached.startedAt as number;
  assert.ok(started('candidate') < started('reference'));
  // Each version was stopped while the other ran: its iterations of 20 ms or 40 ms stop for a slice (1 s or more).
  for (const arm of ['reference', 'candidate']) {
    const profile = JSON.parse(readFileSync(join(out, `round-01-${arm}.json`), 'utf8'));
    const times = profile.modes.cached.ranks[0].iterations.map((it: { t: number }) => it.t);
    const gaps = times.slice(1).map((t: number, k: number) => t - times[k]);
    assert.ok(Math.max(...gaps) > 900, `${arm}: its longest gap ${Math.max(...gaps)} ms`);
    assert.equal(profile.modes.cached.status, 'ok', `${arm}: ended by the gate, its profile ok`);
  }
});

test('Ctrl-C in a sliced round ends both jobs, the stopped one too, with exit 130 and the rounds saved', async () => {
  const out = join(work, 'sliced-interrupted');
  const marked = job(21); // its step marks its processes
  const cli = startCli(
    ['gate', '--against', marked.join(' '), '--epochs', 'later', '--data', data, '--out-dir', out, '--', ...marked],
    { cwd: work, env },
  );
  // Both jobs run once the candidate's profile has its folder; a few slices later one of them is stopped.
  while (!existsSync(join(out, 'round-01-candidate.d'))) await sleep(100);
  await sleep(3000);
  cli.kill('SIGINT');
  const result = await cli;
  assert.equal(result.exitCode, ExitCode.Interrupted, result.all);
  assert.match(result.all, /interrupted; the rounds measured so far are in/);
  const left = await execa('pgrep', ['-f', marked.slice(1).join(' ')], { reject: false });
  assert.equal(left.stdout, '', 'no job of the round is left, stopped or running');
  assert.ok(existsSync(join(out, 'round-01-reference.json')), "the round's profiles are saved");
});
