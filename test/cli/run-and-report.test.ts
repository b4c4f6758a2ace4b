/**
 * What `profile` prints when the job fails (issue 13, item 5): before any
 * iteration, the failure and its log tail and nothing else; after a mode was
 * measured, today's summary plus the failure. The job is a fake mode runner:
 * nothing is spawned or timed.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { runAndReport } from '../../src/cli/run-and-report.js';
import { ExitCode } from '../../src/errors.js';
import { readProfile } from '../../src/store/profile-store.js';
import type { ProfileRunInput } from '../../src/profile/run-profile.js';
import type { ModeRunInput } from '../../src/profile/run-mode.js';
import type { ModeResult } from '../../src/schema/profile.js';
import { fakeModeRunner, fakeProfileInput } from '../profile/fake-mode-runner.js';
import { fakeIo } from './fake-io.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsa-run-and-report-'));
fs.mkdirSync(path.join(dir, 'data'));
fs.writeFileSync(path.join(dir, 'data', 'a.bin'), 'x');
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A run whose job exits with `code` after writing a traceback, before any iteration. */
function failingRun(input: ModeRunInput, code: number | null, signal: string | null = null): ModeResult {
  fs.mkdirSync(input.modeDir, { recursive: true });
  const logs = { stdout: path.join(input.modeDir, 'stdout.log'), stderr: path.join(input.modeDir, 'stderr.log') };
  fs.writeFileSync(logs.stdout, 'loading the model\n');
  fs.writeFileSync(
    logs.stderr,
    'Traceback (most recent call last):\n  File "train.py", line 3\nModuleNotFoundError: No module named \'torchvision\'\n',
  );
  return {
    mode: input.mode,
    status: 'failed',
    stopReason: 'job-failed',
    jobExitCode: code,
    jobSignal: signal,
    startedAt: 1_700_000_000_000,
    wallSec: 0.4,
    state: {
      proven: false,
      reason: 'no iterations',
      residentBytesBefore: 0,
      datasetBytes: 1,
      readBytes: null,
      consumedBytes: 0,
      readFraction: null,
      readBytesSource: 'fake',
    },
    ranks: [],
    paceRank: null,
    summary: null,
    resources: [],
    jobCpuSecPerSample: null,
    storageReadBytesPerSec: null,
    badEventLines: 0,
    logs,
    cpus: null,
  };
}

function input(name: string, modeRunner: ProfileRunInput['modeRunner']): ProfileRunInput {
  return fakeProfileInput(dir, name, modeRunner, { minIterations: 20, maxIterations: 100, passes: 1 });
}

test('a job that fails before any iteration: the mode, its exit code, where its logs are, their tail, and nothing else', async () => {
  const io = fakeIo(dir);
  const run = input('at-once', async (mode) => failingRun(mode, 1));
  const { exitCode, outcome } = await runAndReport(run, io, { json: false });
  assert.equal(exitCode, ExitCode.JobFailed);
  assert.equal(io.out, '', 'no summary: no table, verdict, advice or caveats');
  const failure = io.err.slice(io.err.indexOf('ds-analyzer:'));
  assert.equal(
    failure,
    `ds-analyzer: the job exited with code 1 in synthetic mode before its first iteration; nothing was measured (the partial profile is saved in ${run.outFile})\n` +
      `its output: ${path.join(dir, 'at-once.d', 'synthetic', 'stdout.log')} and ${path.join(dir, 'at-once.d', 'synthetic', 'stderr.log')}\n` +
      'last lines of its output:\n' +
      '  | Traceback (most recent call last):\n  |   File "train.py", line 3\n  | ModuleNotFoundError: No module named \'torchvision\'\n',
  );
  for (const noise of [/verdict/, /advice/, /caveat/, /unknown/, /----/, /profile the missing/, /UNPROVEN/])
    assert.doesNotMatch(io.err, noise);
  // The partial profile is still saved, and records the failed mode.
  const saved = readProfile(run.outFile);
  assert.equal(saved.status, 'partial');
  assert.equal(saved.modes.synthetic?.status, 'failed');
  assert.equal(outcome.path, run.outFile);
});

test('a job killed by a signal before any iteration says which signal', async () => {
  const io = fakeIo(dir);
  const { exitCode } = await runAndReport(
    input('killed', async (mode) => failingRun(mode, null, 'SIGKILL')),
    io,
    { json: false },
  );
  assert.equal(exitCode, ExitCode.JobFailed);
  assert.equal(io.out, '');
  assert.match(
    io.err,
    /^ds-analyzer: the job was killed by SIGKILL in synthetic mode before its first iteration; nothing was measured/m,
  );
});

test('with --json the partial profile is still the only thing on stdout', async () => {
  const io = fakeIo(dir);
  const run = input('json', async (mode) => failingRun(mode, 2));
  assert.equal((await runAndReport(run, io, { json: true })).exitCode, ExitCode.JobFailed);
  assert.equal(JSON.parse(io.out).modes.synthetic.jobExitCode, 2);
  assert.match(io.err, /exited with code 2 in synthetic mode before its first iteration/);
});

test('a failure after a mode was measured keeps the summary and adds the failure', async () => {
  const ok = fakeModeRunner({
    waitMs: { synthetic: 0, cached: 5, cold: 20 },
    stepMs: { synthetic: 50, cached: 50, cold: 50 },
    driftPerSec: 0,
    noise: 0.02,
    startupSec: 1,
    seed: 3,
  });
  const io = fakeIo(dir);
  const run = input('later', async (mode) => (mode.mode === 'synthetic' ? ok.run(mode) : failingRun(mode, 1)));
  assert.equal((await runAndReport(run, io, { json: false })).exitCode, ExitCode.JobFailed);
  assert.match(io.out, /^synthetic\s+\d/m, 'the measured mode is shown');
  assert.match(io.err, /^ds-analyzer: the job exited with code 1 in cached mode; the synthetic mode is saved in /m);
  assert.doesNotMatch(io.err, /before its first iteration/);
  assert.match(io.err, /ModuleNotFoundError/);
});

test('--redact: nothing printed, live or after, holds an absolute path of the run', async () => {
  const io = fakeIo(dir);
  const run = input('redacted', async (mode) => failingRun(mode, 1));
  // The data and the profile lie outside the working folder and home: each absolute path is shown as <abs>/NAME.
  const { exitCode } = await runAndReport(run, io, {
    json: false,
    redact: { home: '/nonexistent-home', cwd: '/nonexistent-cwd' },
  });
  assert.equal(exitCode, ExitCode.JobFailed);
  assert.ok(!(io.out + io.err).includes(dir), `${io.err}\n${io.out}`);
  assert.match(io.err, /<abs>\/redacted\.json/);
});

test('a cold mode whose endpoint froze: STALLED in the summary, verdict unknown, a partial profile and exit 5', async () => {
  const ok = fakeModeRunner({
    waitMs: { synthetic: 0, cached: 5, cold: 20 },
    stepMs: { synthetic: 50, cached: 50, cold: 50 },
    driftPerSec: 0,
    noise: 0.02,
    startupSec: 1,
    seed: 3,
  });
  const text =
    'the endpoint sent nothing from 12 s into the cold block, for 48 s until the block ended, while the job waited on data';
  const io = fakeIo(dir);
  const run = input('frozen', async (mode) => {
    const result = await ok.run(mode);
    return mode.mode === 'cold'
      ? { ...result, stalled: { cause: 'no-bytes', atSec: 12, silentSec: 48, text } }
      : result;
  });
  const { exitCode } = await runAndReport(run, io, { json: false });
  assert.equal(exitCode, ExitCode.JobFailed);
  assert.match(io.out, /^cold\s.*STALLED/m);
  assert.match(io.out, /^cold STALLED: the endpoint sent nothing from 12 s into the cold block/m);
  // The first epoch's verdict needs the cold mode; the later epochs' (the cached pace) stands.
  assert.match(io.out, /verdict, first epoch \(the dataset cold\): unknown: the cold mode stalled/);
  assert.doesNotMatch(io.out, /fetch-bound/);
  assert.match(
    io.err,
    /^ds-analyzer: the cold block stalled: the endpoint sent nothing from 12 s .*; it is kept in the profile, marked stalled and left out of the verdict; the synthetic and cached modes are saved in .*; check the data's source/m,
  );
  const saved = readProfile(run.outFile);
  assert.equal(saved.status, 'partial');
  assert.equal(saved.modes.cold?.stalled?.cause, 'no-bytes');
  assert.equal(saved.analysis?.fetchStallMs, null);
});
