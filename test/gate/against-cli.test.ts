import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ExitCode } from '../../src/errors.js';
import { run } from '../../src/cli/main.js';
import { noPaceReason } from '../../src/cli/against-rounds.js';
import { mulberry32 } from '../../src/random.js';
import { expectOneLineError, fakeIo } from '../cli/fake-io.js';
import { fixturePath } from './fixtures.js';

const cwd = mkdtempSync(join(tmpdir(), 'dsa-against-cli-'));

test('gate --against: bad command lines are one-line errors with their own codes, before any job runs', async () => {
  const job = ['--', 'node', 'job.js'];
  await expectOneLineError(
    cwd,
    ['gate', '--against', 'a | b', '--data', cwd, ...job],
    ExitCode.Usage,
    /shell syntax '\|'.*sh -c/,
  );
  await expectOneLineError(
    cwd,
    ['gate', '--against', 'node job.js', ...job],
    ExitCode.Usage,
    /needs the dataset.*--data/,
  );
  await expectOneLineError(
    cwd,
    ['gate', '--against', 'node job.js', '--data', cwd],
    ExitCode.Usage,
    /candidate command after --/,
  );
  await expectOneLineError(
    cwd,
    ['gate', '--against', 'node job.js', '--data', cwd, '--rounds', '1', ...job],
    ExitCode.BadValue,
    /--rounds '1' is below 2/,
  );
  await expectOneLineError(
    cwd,
    ['gate', '--against', 'node job.js', '--data', cwd, '--baseline', 'b.json', ...job],
    ExitCode.Usage,
    /drop --baseline/,
  );
  // --max-regression is --against's own limit: refused only beside another budget, which is named alone.
  await expectOneLineError(
    cwd,
    ['gate', '--against', 'node job.js', '--data', cwd, '--max-regression', '5%', '--max-fetch-stall', '10%', ...job],
    ExitCode.Usage,
    /drop --max-fetch-stall, or gate/,
  );
  writeFileSync(join(cwd, 'a-file'), '');
  await expectOneLineError(
    cwd,
    ['gate', '--against', 'node job.js', '--data', cwd, '--out-dir', join(cwd, 'a-file', 'ab'), ...job],
    ExitCode.Environment,
    /cannot make the rounds' folder .*pass --out-dir/,
  );
  await expectOneLineError(
    cwd,
    ['gate', '--against', 'node job.js', '--data', cwd, '--epochs', 'second', ...job],
    ExitCode.BadValue,
    /--epochs 'second' is not one of first, later/,
  );
});

test('gate: the flags of --against without it, and two profiles, are refused', async () => {
  const profile = fixturePath('pass');
  await expectOneLineError(
    cwd,
    ['gate', profile, '--max-fetch-stall', '20%', '--rounds', '4'],
    ExitCode.Usage,
    /--rounds belongs to A\/B in one run/,
  );
  await expectOneLineError(
    cwd,
    ['gate', profile, '--max-fetch-stall', '20%', '--python', '/usr/bin/python3', '--as-user', 'nobody'],
    ExitCode.Usage,
    /--python, --as-user belong to A\/B in one run/,
  );
  await expectOneLineError(
    cwd,
    ['gate', profile, profile, '--max-fetch-stall', '20%'],
    ExitCode.Usage,
    /one profile, got 2/,
  );
});

test('gate --noise-history needs --baseline and is refused beside --history', async () => {
  const profile = fixturePath('pass');
  await expectOneLineError(
    cwd,
    ['gate', profile, '--max-fetch-stall', '20%', '--noise-history', cwd],
    ExitCode.Usage,
    /pass --baseline FILE too/,
  );
  await expectOneLineError(cwd, ['gate', '--history', cwd, '--noise-history', cwd], ExitCode.Usage, /not --history/);
  await expectOneLineError(
    cwd,
    ['gate', profile, '--baseline', profile, '--noise-history', join(cwd, 'none')],
    ExitCode.MissingInput,
    /--noise-history '.*none' is not a folder/,
  );
});

/** A folder of `n` copies of the pass profile, an hour apart, the cold pace off by `spread` from run to run. */
function noisyHistory(name: string, n: number, spread: number): string {
  const dir = join(cwd, name);
  mkdirSync(dir);
  const base = JSON.parse(readFileSync(fixturePath('pass'), 'utf8'));
  delete base.integrity;
  const random = mulberry32(11);
  for (let i = 0; i < n; i++) {
    const p = structuredClone(base);
    p.createdAt = new Date(Date.parse('2026-11-01T00:00:00Z') + i * 3_600_000).toISOString();
    p.modes.cold.summary.iterMs.mean *= 1 + spread * (random() - 0.5);
    writeFileSync(join(dir, `run-${i}.json`), JSON.stringify(p));
  }
  return dir;
}

test('gate --baseline --noise-history: a regression beyond the two profiles passes within the noise between runs, said', async () => {
  const regressed = fixturePath('regressed');
  const baseline = fixturePath('pass');
  const alone = fakeIo(cwd, {});
  assert.equal(await run(['gate', regressed, '--baseline', baseline], alone), ExitCode.GateFailed, alone.out);
  const noisy = fakeIo(cwd, {});
  const dir = noisyHistory('noisy', 10, 0.6);
  const code = await run(['gate', regressed, '--baseline', baseline, '--noise-history', dir], noisy);
  assert.equal(code, ExitCode.Ok, noisy.out + noisy.err);
  assert.match(noisy.out, /noise between runs counted: the spread of 10 stored profiles in .*noisy .* by [\d.]+x/);
  const quiet = fakeIo(cwd, {});
  const still = await run(
    ['gate', regressed, '--baseline', baseline, '--noise-history', noisyHistory('quiet', 10, 0.002)],
    quiet,
  );
  assert.equal(still, ExitCode.GateFailed, quiet.out);
  assert.match(quiet.out, /noise between runs checked: .* is no wider than the two profiles' own/);
});

test('a round with no pace says why: a job too short to time past its warm-up is named so, with what to change', () => {
  const iterations = (n: number) => Array.from({ length: n }, () => ({}));
  const short = { status: 'ok', stopReason: 'budget', summary: null, ranks: [{ iterations: iterations(8) }] };
  const why = noPaceReason(short as unknown as Parameters<typeof noPaceReason>[0], 'cold');
  assert.match(why, /^its job ended after 8 iterations, too few to time past the warm-up: .*run longer/);
  const failed = { status: 'failed', stopReason: 'crash', summary: null, ranks: [] };
  assert.equal(noPaceReason(failed as unknown as Parameters<typeof noPaceReason>[0], 'cold'), 'failed (crash)');
  assert.equal(noPaceReason(undefined, 'cached'), 'the cached mode did not run');
});
