import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../src/cli/main.js';
import { ExitCode } from '../../src/errors.js';
import { mixSeed, mulberry32 } from '../../src/random.js';
import { fakeIo } from '../cli/fake-io.js';
import { fixturePath } from './fixtures.js';
import { HistoryOutputSchema } from '../../src/schema/history-output.js';
import { assertFollowsSchema } from '../schema/follows-schema.js';

/** The fields a test alters. */
type Edited = { jobName: string; command: string[] };

const root = mkdtempSync(join(tmpdir(), 'dsa-history-'));

/**
 * A folder of `n` copies of the recorded pass profile, an hour apart, the
 * cold iteration time scaled by `scale(i)` and 1% noise; written in a
 * shuffled name order so that only createdAt gives the time order.
 */
function historyFolder(name: string, n: number, scale: (i: number) => number, edit?: (p: Edited, i: number) => void) {
  const dir = join(root, name);
  mkdirSync(dir);
  const base = JSON.parse(readFileSync(fixturePath('pass'), 'utf8'));
  delete base.integrity;
  const random = mulberry32(mixSeed(7, n));
  for (let i = 0; i < n; i++) {
    const p = structuredClone(base);
    p.createdAt = new Date(Date.parse('2026-11-01T00:00:00Z') + i * 3_600_000).toISOString();
    p.modes.cold.summary.iterMs.mean *= scale(i) * (1 + 0.01 * (random() - 0.5));
    edit?.(p, i);
    writeFileSync(join(dir, `run-${String((i * 7) % n).padStart(2, '0')}-${i}.json`), JSON.stringify(p));
  }
  return dir;
}

async function gate(args: string[]) {
  const io = fakeIo(root, {});
  const code = await run(['gate', ...args], io);
  assert.doesNotMatch(io.err, /\bat .+:\d+:\d+\)?$/m, 'no stack trace');
  return { code, out: io.out, err: io.err };
}

test('a 10% slowdown at the newest profiles fails the history gate, naming the profile where it began', async () => {
  const dir = historyFolder('step', 14, (i) => (i >= 10 ? 1.1 : 1));
  const { code, out } = await gate(['--history', dir, '--max-regression', '5%']);
  assert.equal(code, ExitCode.GateFailed, out);
  assert.match(out, /^gate FAILED: history of 14 profiles/);
  assert.match(out, /step at run-\d\d-10\.json \(2026-11-01T10:00:00\.000Z\): median [\d.]+ → [\d.]+ \(\+1\d\.\d%\)/);
  assert.match(out, /^ {28} {10}\^$/m, 'the step marked under its profile');
  assert.match(out, /[▁▂▃▄▅▆▇█]{14}/);
  assert.match(out, /exit 1$/m);
  const json = await gate(['--history', dir, '--json']);
  const verdict = assertFollowsSchema(HistoryOutputSchema, JSON.parse(json.out), 'gate --history --json');
  assert.equal(verdict.exitCode, json.code);
  assert.equal(verdict.kind, 'gate-history');
  assert.equal(verdict.schemaVersion, 1);
  assert.equal(verdict.failing?.index, 10);
  assert.equal(verdict.series[0].changes[0].index, 10);
  assert.match(verdict.points[10].file, /^run-\d\d-10\.json$/);
});

test('a flat history, or a step within the budget, or one long ago, passes', async () => {
  const flat = await gate(['--history', historyFolder('flat', 12, () => 1)]);
  assert.equal(flat.code, ExitCode.Ok, flat.out);
  assert.match(flat.out, /no step found/);
  const small = await gate(['--history', historyFolder('small', 14, (i) => (i >= 10 ? 1.04 : 1))]);
  assert.equal(small.code, ExitCode.Ok, small.out);
  const old = await gate(['--history', historyFolder('old', 16, (i) => (i >= 5 ? 1.2 : 1))]);
  assert.equal(old.code, ExitCode.Ok, old.out);
  assert.match(old.out, /step at run-\d\d-5\.json/);
});

test('history errors are one line each with their own exit codes', async () => {
  const missing = await gate(['--history', join(root, 'nowhere')]);
  assert.equal(missing.code, ExitCode.MissingInput);
  assert.match(missing.err, /^ds-analyzer: --history '.*nowhere' is not a folder: pass the folder/);
  const few = await gate(['--history', historyFolder('few', 4, () => 1)]);
  assert.equal(few.code, ExitCode.MissingInput);
  assert.match(few.err, /holds 4 usable profiles; the history gate needs at least 6/);
  const mixed = historyFolder(
    'mixed',
    8,
    () => 1,
    (p, i) => {
      if (i === 3) p.jobName = 'other';
    },
  );
  const jobs = await gate(['--history', mixed]);
  assert.equal(jobs.code, ExitCode.Usage);
  assert.match(jobs.err, /mixes profiles of different jobs \('pass', 'other'\)|\('other', 'pass'\)/);
  const withBudget = await gate(['--history', join(root, 'flat'), '--max-fetch-stall', '20%']);
  assert.equal(withBudget.code, ExitCode.Usage);
  assert.match(withBudget.err, /--max-fetch-stall cannot go with it/);
  const corruptDir = historyFolder('corrupt', 8, () => 1);
  writeFileSync(join(corruptDir, 'broken.json'), '{"schemaVersion": 1,');
  const corrupt = await gate(['--history', corruptDir]);
  assert.equal(corrupt.code, ExitCode.CorruptFile);
  assert.match(corrupt.err, /broken\.json/);
  for (const r of [missing, few, jobs, withBudget, corrupt]) assert.equal(r.err.trimEnd().split('\n').length, 1, r.err);
});

test('profiles of one job with different commands are judged, with a warning', async () => {
  const dir = historyFolder(
    'commands',
    8,
    () => 1,
    (p, i) => {
      if (i > 4) p.command = [...p.command, '--epochs', '2'];
    },
  );
  const { code, err } = await gate(['--history', dir]);
  assert.equal(code, ExitCode.Ok);
  assert.match(err, /warning: the history's profiles ran 2 different commands of one job/);
});

test('--chart draws the series as a PNG; without --history, or to a folder that is not there, one line each', async () => {
  const png = join(root, 'history.png');
  const { code } = await gate(['--history', join(root, 'step'), '--chart', png]);
  assert.equal(code, ExitCode.GateFailed);
  const bytes = readFileSync(png);
  assert.deepEqual([...bytes.subarray(1, 4)], [...Buffer.from('PNG')]);
  assert.ok(bytes.length > 10_000, `a drawn chart, not an empty one: ${bytes.length} bytes`);
  const alone = await gate([fixturePath('pass'), '--max-fetch-stall', '20%', '--chart', png]);
  assert.equal(alone.code, ExitCode.Usage);
  assert.match(alone.err, /--chart draws the history: pass it with --history DIR/);
  const nowhere = await gate(['--history', join(root, 'step'), '--chart', join(root, 'no', 'such', 'c.png')]);
  assert.equal(nowhere.code, ExitCode.Environment);
  assert.match(nowhere.err, /^ds-analyzer: cannot write the chart '.*c\.png' \(.*\): pass --chart a path/);
  assert.equal(nowhere.err.trimEnd().split('\n').length, 1);
});
