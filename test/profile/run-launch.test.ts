/**
 * runLaunch with the OS-facing pieces faked: the cache state (FakeCacheState),
 * the job (fakeSwitchingJobStarter: a job in this process that switches modes
 * at the control file's request, on the real clock) and the sampler (none).
 * What is left is the launch's own work: setting each block's state while the
 * job runs, telling the job, and cutting each block out of the job's events.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { FakeCacheState } from '../support/fake-cache-state.js';
import { FakeDataSource } from '../support/fake-data-source.js';
import { fakeSwitchingJobStarter, type FakeSwitchingScript } from '../support/fake-job.js';
import { pollIntervalMs, runLaunch, type LaunchBlock } from '../../src/profile/run-launch.js';
import type { Mode } from '../../src/schema/events.js';
import type { Dataset } from '../../src/system/dataset/dataset.js';
import { fakeSamplerStarter } from '../support/fake-sampler.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dsa-run-launch-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

const dataset: Dataset = {
  roots: [path.join(root, 'data')],
  files: [{ path: path.join(root, 'data', '0.bin'), bytes: 1000 }],
  bytes: 1000,
  meanFileBytes: 1000,
  fileBytesQuantiles: { p10: 1000, p50: 1000, p90: 1000, max: 1000 },
  device: null,
  fitsInMemory: true,
  memoryBudgetBytes: 2 ** 40,
  skippedEntries: 0,
};

const SCRIPT: FakeSwitchingScript = {
  waitMs: { synthetic: 0, cached: 4, cold: 10 },
  computeMs: 3,
  inFlight: 3,
  switches: true,
};

async function launch(modes: Mode[], script: FakeSwitchingScript, name: string, timeoutSec = 60) {
  const cacheState = new FakeCacheState();
  const job = fakeSwitchingJobStarter(script);
  const blocks: LaunchBlock[] = modes.map((mode, k) => ({
    mode,
    label: `${mode}-${k}`,
    cacheState,
    precision: 0.5,
    minIterations: 25,
    maxIterations: 30,
  }));
  const outcome = await runLaunch({
    blocks,
    argv: ['train'],
    cwd: root,
    env: { HOME: '/home/someone' },
    dataset,
    dataSource: new FakeDataSource(),
    modeDir: path.join(root, name),
    timeoutSec,
    firstIterationTimeoutSec: 60,
    stopGraceSec: 5,
    killGraceSec: 1,
    sync: true,
    pollMs: 10,
    wrapArgv: (argv) => argv,
    startJob: job.start,
    startSampler: fakeSamplerStarter([]).start,
    interrupted: () => false,
  });
  return { outcome, cacheState, job };
}

test('one launch measures each block in its mode, its state set while the job runs, the carried batches left out', async () => {
  const { outcome, cacheState, job } = await launch(['synthetic', 'cached', 'cold', 'cold'], SCRIPT, 'switching');
  assert.equal(job.started.length, 1, 'the job is started once');
  const env = job.started[0].env;
  assert.equal(env.DSA_MODE, 'synthetic');
  assert.ok(env.DSA_CONTROL_FILE?.endsWith('CONTROL'));
  assert.equal(env.DSA_PROFILING, '1');
  assert.equal(outcome.switchable, true);
  assert.deepEqual(outcome.notRun, []);
  assert.deepEqual(
    outcome.results.map((r) => r.mode),
    ['synthetic', 'cached', 'cold', 'cold'],
  );
  // Each state set once, in order, and ended; the second cold block kept the first's.
  assert.deepEqual(
    cacheState.prepared.map((p) => [p.mode, p.finished]),
    [
      ['synthetic', true],
      ['cached', true],
      ['cold', true],
    ],
  );
  for (const [k, result] of outcome.results.entries()) {
    assert.equal(result.status, 'ok', `${result.mode}: ${result.stopReason}`);
    assert.equal(result.block?.index, k);
    if (result.mode === 'synthetic')
      assert.equal(
        result.state.proven,
        true,
        `block ${k} acknowledged by its start or block event: ${result.state.reason}`,
      );
    const expected = SCRIPT.waitMs[result.mode] + SCRIPT.computeMs;
    // Timers overshoot a little on a busy machine; the carried batches (another mode's pace) would pull it off further.
    assert.ok(
      Math.abs(result.summary!.iterMs.mean - expected) < 3,
      `${result.mode}: ${result.summary!.iterMs.mean} ms against ${expected}`,
    );
  }
  // A switch of mode leaves out the batches in flight; a block after one of its own mode carries nothing.
  assert.deepEqual(
    outcome.results.map((r) => r.block?.carriedIterations),
    [0, 3, 3, 0],
  );
  const cached = outcome.results[1].ranks[0].iterations;
  assert.deepEqual(
    cached.slice(0, 3).map((it) => [it.waitMs, it.warmup]),
    [
      [0, true],
      [0, true],
      [0, true],
    ],
    'the synthetic-paced batches are warm-up',
  );
  // The blocks do not overlap, and the iterations between them (the state being set) belong to none.
  const spans = outcome.results.map((r) => [r.ranks[0].iterations[0].i, r.ranks[0].iterations.at(-1)!.i]);
  for (let k = 1; k < spans.length; k++) assert.ok(spans[k][0] > spans[k - 1][1], JSON.stringify(spans));
  assert.ok(outcome.jobIterations >= spans.at(-1)![1] + 1);
});

test('a job that does not offer to switch runs its first block; the others are left for launches of their own', async () => {
  const { outcome, job } = await launch(
    ['synthetic', 'cached', 'cold'],
    { ...SCRIPT, switches: false },
    'not-switching',
  );
  assert.equal(job.started.length, 1);
  assert.equal(outcome.switchable, false);
  assert.deepEqual(
    outcome.results.map((r) => [r.mode, r.status]),
    [['synthetic', 'ok']],
  );
  assert.deepEqual(
    outcome.notRun.map((b) => b.mode),
    ['cached', 'cold'],
  );
});

test('a job whose data runs out in a later block: that block is left to the next launch, not failed', async () => {
  const { outcome } = await launch(['synthetic', 'cached', 'cold'], { ...SCRIPT, dataIterations: 70 }, 'runs-out');
  assert.ok(outcome.results.length >= 1 && outcome.results.length < 3, outcome.results.map((r) => r.mode).join(', '));
  assert.ok(outcome.results.every((r) => r.status === 'ok'));
  assert.deepEqual(
    [...outcome.results.map((r) => r.mode), ...outcome.notRun.map((b) => b.mode)],
    ['synthetic', 'cached', 'cold'],
  );
});

test('--timeout is per block: a block that runs past it ends the launch timed out, the blocks before it kept', async () => {
  // 30 iterations of 3 ms, then cached ones of 200 ms: the cached block cannot reach its 25 iterations in 1 s.
  const { outcome, job } = await launch(
    ['synthetic', 'cached', 'cold'],
    { ...SCRIPT, waitMs: { synthetic: 0, cached: 200, cold: 10 } },
    'timeout',
    1,
  );
  assert.equal(job.started.length, 1);
  assert.deepEqual(
    outcome.results.map((r) => r.mode),
    ['synthetic', 'cached'],
  );
  assert.equal(outcome.results[0].status, 'ok');
  assert.equal(outcome.results[1].stopReason, 'timeout');
  assert.deepEqual(
    outcome.notRun.map((b) => b.mode),
    ['cold'],
  );
});

test('pollIntervalMs: pollMs while a block is young, then a tenth of its age, at most 4 x pollMs', () => {
  assert.equal(pollIntervalMs(0, 250), 250);
  assert.equal(pollIntervalMs(2_500, 250), 250);
  assert.equal(pollIntervalMs(6_000, 250), 600);
  assert.equal(pollIntervalMs(60_000, 250), 1000);
  assert.equal(pollIntervalMs(60_000, 20), 80);
});
