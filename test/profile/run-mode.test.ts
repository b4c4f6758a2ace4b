/**
 * runMode with every OS-facing piece faked: the cache state (FakeCacheState),
 * the job (fakeJobStarter: protocol events on a virtual clock) and the
 * resource sampler (fakeSamplerStarter: storage reads on the same clock).
 * What is left is runMode's own work: set the state up before the job and
 * undo it after, read the events, and prove the state from the residency
 * before the run and the reads during it.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { FakeCacheState } from '../support/fake-cache-state.js';
import { FakeDataSource } from '../support/fake-data-source.js';
import { fakeJobStarter, type FakeJobScript } from '../support/fake-job.js';
import { runMode, type ModeRunInput } from '../../src/profile/run-mode.js';
import type { Mode } from '../../src/schema/events.js';
import type { ResourceSample } from '../../src/schema/profile.js';
import type { Dataset } from '../../src/system/dataset/dataset.js';
import { fakeSamplerStarter } from '../support/fake-sampler.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dsa-run-mode-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

const FILE_BYTES = 100_000;
const dataset: Dataset = {
  roots: [path.join(root, 'data')],
  files: Array.from({ length: 100 }, (_, k) => ({ path: path.join(root, 'data', `${k}.bin`), bytes: FILE_BYTES })),
  bytes: 100 * FILE_BYTES,
  meanFileBytes: FILE_BYTES,
  fileBytesQuantiles: { p10: FILE_BYTES, p50: FILE_BYTES, p90: FILE_BYTES, max: FILE_BYTES },
  device: null,
  fitsInMemory: true,
  memoryBudgetBytes: 2 ** 40,
  skippedEntries: 0,
};

const JOB: FakeJobScript = {
  iterations: 300,
  waitMs: 2,
  computeMs: 18,
  samples: 4,
  bytes: 4 * FILE_BYTES,
  workers: 2,
  startMs: 1_700_000_000_000,
};

/**
 * Samples every 100 ms of the job's clock, from before its start to after its end; the tree reads `readShare` of
 * what it consumes, `leadMs` ahead of consuming it (a loader's prefetch), and nothing past its data's end.
 */
function samplesFor(job: FakeJobScript, readShare: number, leadMs = 0): ResourceSample[] {
  const iterMs = job.waitMs + job.computeMs;
  const bytesPerMs = ((job.bytes ?? 0) / iterMs) * readShare;
  const samples: ResourceSample[] = [];
  for (let t = job.startMs - 1000; t <= job.startMs + job.iterations * iterMs + 1000; t += 100) {
    const elapsed = t < job.startMs ? 0 : Math.min(t + leadMs - job.startMs, job.iterations * iterMs);
    samples.push({
      t,
      cpuPct: 50,
      jobCpuSec: elapsed / 1000,
      jobProcesses: 3,
      jobReadBytes: elapsed * bytesPerMs,
      diskReadBytesPerSec: 0,
      pageCacheBytes: 0,
    });
  }
  return samples;
}

async function runFaked(
  mode: Mode,
  residentShare: number,
  readShare: number,
  env: Record<string, string> = {},
  { leadMs = 0, ownCounter = false }: { leadMs?: number; ownCounter?: boolean } = {},
) {
  const cacheState = new FakeCacheState({ residentShare: { [mode]: residentShare }, finish: { reEvictions: 3 } });
  const job = fakeJobStarter(JOB);
  const sampler = fakeSamplerStarter(samplesFor(JOB, readShare, leadMs));
  const source = new FakeDataSource({ ownCounter });
  const input: ModeRunInput = {
    mode,
    argv: ['train'],
    cwd: root,
    env: { HOME: '/home/someone', PYTHONPATH: '/opt/lib', ...env },
    dataset,
    dataSource: source,
    modeDir: path.join(root, `${mode}-${residentShare}-${readShare}-${leadMs}-${ownCounter}`),
    precision: 0.01,
    minIterations: 50,
    maxIterations: 1000,
    timeoutSec: 60,
    firstIterationTimeoutSec: 60,
    stopGraceSec: 1,
    killGraceSec: 1,
    sync: true,
    pollMs: 10,
    wrapArgv: (argv) => argv,
    cacheState,
    startJob: job.start,
    startSampler: sampler.start,
    interrupted: () => false,
  };
  const result = await runMode(input);
  return { result, cacheState, job, sampler, source };
}

test('runMode sets the cache state up before the job, undoes it after, and hands the job its environment', async () => {
  const { result, cacheState, job, sampler, source } = await runFaked('cached', 1, 0);
  assert.deepEqual(cacheState.prepared, [{ mode: 'cached', datasetBytes: dataset.bytes, finished: true }]);
  assert.deepEqual(
    source.meters,
    [{ mode: 'cached', attached: true, finished: true }],
    "the data source's meter ran over the job",
  );
  assert.equal(job.started.length, 1);
  const env = job.started[0].env;
  assert.equal(env.HOME, '/home/someone', 'the CLI environment is inherited');
  assert.equal(env.DSA_MODE, 'cached');
  assert.equal(env.DSA_ITERATIONS, '1000');
  assert.ok(
    env.PYTHONPATH?.endsWith(':/opt/lib'),
    `the Python hook goes first, the user's path after: ${env.PYTHONPATH}`,
  );
  assert.equal(job.started[0].cwd, root);
  assert.deepEqual(sampler.roots, [result.ranks[0].pid]);
  assert.equal(result.status, 'ok');
  assert.equal(result.stopReason, 'job-exit');
  assert.equal(result.ranks.length, 1);
  assert.equal(result.ranks[0].iterations.length, JOB.iterations);
  assert.equal(result.summary?.samplesPerIter, JOB.samples);
});

test('runMode proves the cached and cold states from the residency before the run and the reads during it', async () => {
  const cached = (await runFaked('cached', 1, 0)).result.state;
  assert.equal(cached.proven, true, cached.reason);
  assert.equal(cached.residentBytesBefore, dataset.bytes);
  assert.equal(cached.readFraction, 0);

  const cold = (await runFaked('cold', 0, 1)).result.state;
  assert.equal(cold.proven, true, cold.reason);
  assert.equal(cold.reEvictions, 3, "the cache state's counters reach the proof");
  assert.ok(Math.abs(cold.readFraction! - 1) < 0.02, String(cold.readFraction));
  assert.equal(
    cold.readBytesSource,
    'the fake meter over the measured window',
    "the reads come from the source's meter over the window, not from /proc/self/io",
  );

  const halfCold = (await runFaked('cold', 0, 0.5)).result.state;
  assert.equal(halfCold.proven, false);
  assert.match(halfCold.reason, /part of the data came from a cache/);

  const warmBefore = (await runFaked('cold', 0.5, 1)).result.state;
  assert.equal(warmBefore.proven, false);
  assert.match(warmBefore.reason, /50\.0% of the dataset was still in the page cache/);
});

test("a source's own counter proves the cold mode over the whole run: a prefetch that read ahead before the window opened still counts", async () => {
  // A job that ends at its data's end with its loader 1.5 s (a quarter of the run) ahead: nothing is read after the
  // last batch, so the measured window saw only part of what its iterations consumed.
  const lead = { leadMs: 1500 };
  const windowed = (await runFaked('cold', 0, 1, {}, lead)).result.state;
  assert.equal(windowed.proven, false, 'read_bytes over the window miss the reads made before it');
  assert.equal(windowed.readBytesSource, 'the fake meter over the measured window');

  const counted = (await runFaked('cold', 0, 1, {}, { ...lead, ownCounter: true })).result.state;
  assert.equal(counted.proven, true, counted.reason);
  assert.equal(counted.readBytesSource, 'the fake meter over the whole run');
  assert.ok(Math.abs(counted.readFraction! - 1) < 0.02, String(counted.readFraction));
  assert.equal(counted.consumedSamples, JOB.iterations * JOB.samples, 'every sample of the run, warm-up included');

  const halfCounted = (await runFaked('cold', 0, 0.5, {}, { ...lead, ownCounter: true })).result.state;
  assert.equal(halfCounted.proven, false, 'half the bytes over the whole run is still half');

  // The cached mode keeps the window, where the start-up's metadata traffic cannot count against it.
  const cached = (await runFaked('cached', 1, 0, {}, { ownCounter: true })).result.state;
  assert.equal(cached.proven, true, cached.reason);
  assert.equal(cached.readBytesSource, 'the fake meter over the measured window');
});

test('each rank carries the node its start event names: the host name and the node rank from the launcher', async () => {
  const one = (await runFaked('cached', 1, 0)).result;
  assert.deepEqual(one.ranks[0].node, { hostname: os.hostname(), nodeRank: 0 });
  const second = (await runFaked('cached', 1, 0, { GROUP_RANK: '1' })).result;
  assert.deepEqual(second.ranks[0].node, { hostname: os.hostname(), nodeRank: 1 });
});

test("the first batch: the last rank's first iteration, after the job's start, split into start-up and the loader's first wait", async () => {
  const { firstBatchOf } = await import('../../src/profile/block-result.js');
  const it = (t: number, waitMs: number) => ({ i: 0, t, waitMs, computeMs: 10, samples: 4 });
  const ranks = [
    { rank: 0, pid: 1, workers: 2, iterations: [it(5_000, 300)], summary: null },
    { rank: 1, pid: 2, workers: 2, iterations: [it(5_400, 900)], summary: null },
  ];
  const first = firstBatchOf(ranks, 1_000)!;
  assert.deepEqual(
    [first.sec, first.startupSec, first.firstWaitSec].map((v) => Number(v.toFixed(6))),
    [4.4, 3.5, 0.9],
  );
  assert.equal(firstBatchOf([{ ...ranks[0], iterations: [] }], 1_000), null);
  // A wait reported longer than the run so far (clocks of two processes) is held to the run.
  assert.deepEqual(firstBatchOf([{ ...ranks[0], iterations: [it(1_500, 900)] }], 1_000), {
    sec: 0.5,
    startupSec: 0,
    firstWaitSec: 0.5,
  });
  // A job that timed iter(loader) (its first epoch event): the workers' start there is the loader's, not the job's
  // start-up.
  const epoch = { t: 5_000, epoch: 0, i: 0, createMs: 1_200, firstWaitMs: 300 };
  const timed = firstBatchOf([{ ...ranks[0], epochs: [epoch] }], 1_000)!;
  assert.deepEqual(
    [timed.sec, timed.startupSec, timed.firstWaitSec].map((v) => Number(v.toFixed(6))),
    [4, 2.5, 1.5],
  );
});
