import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { generateDataset, listDatasetFiles } from '../../src/emulator/generate-dataset.js';
import { Loader, planEpoch, type Batch, type Dispatch, type LoaderOptions } from '../../src/emulator/loader.js';
import { prepareBatch, prepareData, prepareSample, readBatch } from '../../src/emulator/prep.js';

let dir: string;
let files: string[];
let sizes: number[];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dsa-loader-'));
  await generateDataset(dir, { files: 30, fileBytes: 16 * 1024, seed: 3 });
  files = listDatasetFiles(dir);
  sizes = files.map((f) => statSync(f).size);
});

after(() => rmSync(dir, { recursive: true, force: true }));

const sum = (values: number[]): number => values.reduce((a, b) => a + b, 0);

test('planEpoch cuts a seeded permutation into batches, a new one each epoch', () => {
  const epoch0 = planEpoch(30, 4, 1, 0);
  assert.deepEqual(
    epoch0.map((b) => b.length),
    [4, 4, 4, 4, 4, 4, 4, 2],
    'the last batch is short (drop_last=False)',
  );
  assert.deepEqual(
    epoch0.flat().sort((a, b) => a - b),
    Array.from({ length: 30 }, (_, i) => i),
    'every file once per epoch',
  );
  assert.deepEqual(planEpoch(30, 4, 1, 0), epoch0, 'same seed and epoch, same order');
  assert.notDeepEqual(planEpoch(30, 4, 1, 1).flat(), epoch0.flat(), 'each epoch is shuffled anew');
  assert.notDeepEqual(planEpoch(30, 4, 2, 0).flat(), epoch0.flat(), 'the seed changes the order');
});

interface Run {
  batches: Batch[];
  dispatches: Dispatch[];
  /** Batches dispatched when each batch was handed over (before the consumer asked for the next). */
  dispatchedAtDelivery: number[];
}

async function run(options: Partial<LoaderOptions>, epochs?: number, limit?: number): Promise<Run> {
  const dispatches: Dispatch[] = [];
  const loader = Loader.start({
    files,
    batchSize: 4,
    workers: 2,
    prefetchFactor: 2,
    prepMs: 0.5,
    seed: 1,
    onDispatch: (d) => dispatches.push(d),
    ...options,
  });
  const batches: Batch[] = [];
  const dispatchedAtDelivery: number[] = [];
  try {
    for await (const batch of loader.batches(epochs, limit)) {
      batches.push(batch);
      dispatchedAtDelivery.push(dispatches.length);
    }
  } finally {
    await loader.close();
  }
  return { batches, dispatches, dispatchedAtDelivery };
}

for (const workers of [0, 1, 3]) {
  test(`with ${workers} workers batches arrive in order, numbered across epochs, and each epoch reads every file once`, async () => {
    const { batches } = await run({ workers }, 2);
    const expected = [0, 1].flatMap((epoch) =>
      planEpoch(files.length, 4, 1, epoch).map((plan, index) => ({ epoch, index, plan })),
    );
    assert.deepEqual(
      batches.map((b) => [b.seq, b.epoch, b.index, b.samples]),
      expected.map((e, seq) => [seq, e.epoch, e.index, e.plan.length]),
    );
    batches.forEach((b, seq) =>
      assert.equal(b.bytes, sum(expected[seq].plan.map((f) => sizes[f])), `bytes of batch ${seq}`),
    );
  });
}

test('the pipeline runs on across epoch boundaries: prefetchFactor * W batches stay in flight, batch k goes to worker k mod W', async () => {
  const workers = 2;
  const prefetchFactor = 2;
  const epochs = 3;
  const perEpoch = Math.ceil(files.length / 4);
  const total = epochs * perEpoch;
  const { batches, dispatches, dispatchedAtDelivery } = await run({ workers, prefetchFactor }, epochs);
  assert.equal(batches.length, total);
  assert.deepEqual(
    dispatches.map((d) => [d.seq, d.epoch, d.index, d.worker]),
    Array.from({ length: total }, (_, seq) => [seq, Math.floor(seq / perEpoch), seq % perEpoch, seq % workers]),
  );
  // A loader that refilled at each epoch would have dispatched nothing of epoch 1 before handing over all of epoch 0.
  assert.deepEqual(
    dispatchedAtDelivery,
    batches.map((b) => Math.min(total, b.seq + 1 + prefetchFactor * workers)),
    'one batch dispatched per batch handed over, epoch boundaries included',
  );
  const lastOfEpoch0 = perEpoch - 1;
  assert.ok(
    dispatches.slice(0, dispatchedAtDelivery[lastOfEpoch0 - 1]).some((d) => d.epoch === 1),
    'batches of epoch 1 are dispatched before epoch 0 is fully handed over',
  );
  for (let epoch = 0; epoch < epochs; epoch++) {
    const read = dispatches.filter((d) => d.epoch === epoch).flatMap((d) => d.paths);
    assert.deepEqual([...read].sort(), [...files].sort(), `epoch ${epoch} reads every file exactly once`);
  }
});

test('a limit stops the stream after that many batches and dispatches no more (synthetic mode)', async () => {
  const { batches, dispatches } = await run({ workers: 2, prepMs: 0 }, Infinity, 1);
  assert.equal(batches.length, 1);
  assert.equal(dispatches.length, 1);
});

test('a loader is iterated once', async () => {
  const loader = Loader.start({ files, batchSize: 4, workers: 1, prefetchFactor: 1, prepMs: 0, seed: 1 });
  try {
    await loader.batches(1, 1).next();
    await assert.rejects(loader.batches(1).next(), /iterated once/);
  } finally {
    await loader.close();
  }
});

test('a worker reads the files of its queued batches while it prepares the current one', async () => {
  // One worker and three batches in flight: when the first batch is being prepared,
  // the two after it have been asked for, and their reads must already have started.
  const { batches } = await run({ workers: 1, prefetchFactor: 3, prepMs: 5 }, 1);
  assert.equal(
    batches[0].readAheadFiles,
    8,
    'both queued batches (4 files each) were being read while batch 0 was prepared',
  );
  // Later on, the batch after the next is asked for two batches of preparation ahead; a
  // loose bound, as a busy machine may delay the loop that asks.
  const ahead = batches.slice(1, -1).map((b) => b.readAheadFiles);
  assert.ok(
    ahead.filter((files) => files > 0).length >= ahead.length / 2,
    `files read ahead per batch: ${ahead.join(' ')}`,
  );
  const { batches: inline } = await run({ workers: 0 }, 1);
  assert.ok(
    inline.every((b) => b.readAheadFiles === 0),
    'without workers nothing is read ahead',
  );
});

test('a missing file fails the stream with a message naming it', async () => {
  await assert.rejects(
    run({ files: [...files.slice(0, 3), join(dir, 'missing.bin')], prefetchFactor: 1, prepMs: 0 }),
    /could not build batch 0 of epoch 0: .*missing\.bin/,
  );
});

test('prepareData takes prepMs of wall clock from the start of decoding or a carried deadline; decode overruns are counted', async () => {
  const [data] = await readBatch([files[0]]);
  assert.equal(data.length, sizes[0]);
  const startMs = performance.now();
  const sample = prepareData(data, 15);
  assert.ok(performance.now() - startMs >= 15);
  assert.equal(sample.bytes, sizes[0]);
  assert.ok(Number.isFinite(sample.digest));
  assert.deepEqual(
    { ...prepareSample(files[0], 0), decodeMs: 0, deadlineMs: 0 },
    { ...prepareData(data, 0), decodeMs: 0, deadlineMs: 0 },
    'reading synchronously prepares the same sample',
  );
  // A worker going straight on counts from the previous sample's deadline, but carries at most prepMs.
  const fromMs = performance.now() - 1;
  assert.equal(prepareData(data, 10, fromMs).deadlineMs, fromMs + 10, 'prep time counts from the previous deadline');
  const nowMs = performance.now();
  const stale = prepareData(data, 10, nowMs - 1000);
  assert.ok(
    stale.deadlineMs >= nowMs,
    `a stale deadline carries at most the prep time (${(stale.deadlineMs - nowMs).toFixed(2)} ms)`,
  );
  const batch = prepareBatch(files.slice(0, 3), 1e-6);
  assert.equal(batch.samples, 3);
  assert.equal(batch.bytes, sum(sizes.slice(0, 3)));
  assert.equal(batch.overruns, 3, 'decoding takes longer than a nanosecond');
  assert.equal(prepareBatch(files.slice(0, 3), 0).overruns, 0, 'no prep time asked: nothing to overrun');
});

test('onDecodeOverrun is called once when decoding systematically exceeds prepMs', async () => {
  const calls: number[] = [];
  await run({ prepMs: 1e-6, onDecodeOverrun: (overrun) => calls.push(overrun.overruns) }, 1);
  assert.equal(calls.length, 1);
  assert.ok(calls[0] >= 8);
});
