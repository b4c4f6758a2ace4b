import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { generateDataset, listDatasetFiles } from '../../src/emulator/generate-dataset.js';
import { Loader, planEpoch, type Batch } from '../../src/emulator/loader.js';
import { prepareBatch, prepareSample } from '../../src/emulator/prep.js';

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

async function collect(loader: Loader, epoch: number, limit?: number): Promise<Batch[]> {
  const batches: Batch[] = [];
  for await (const batch of loader.epoch(epoch, limit)) batches.push(batch);
  return batches;
}

for (const workers of [0, 1, 3]) {
  test(`with ${workers} workers batches arrive in order and an epoch reads every file once`, async () => {
    const loader = Loader.start({ files, batchSize: 4, workers, prefetchFactor: 2, prepMs: 0.5, seed: 1 });
    try {
      for (const epoch of [0, 1]) {
        const batches = await collect(loader, epoch);
        const plan = planEpoch(files.length, 4, 1, epoch);
        assert.deepEqual(
          batches.map((b) => [b.epoch, b.index, b.samples]),
          plan.map((b, index) => [epoch, index, b.length]),
        );
        batches.forEach((b, index) => assert.equal(b.bytes, sum(plan[index].map((f) => sizes[f]))));
      }
    } finally {
      await loader.close();
    }
  });
}

test('a limit stops the epoch after that many batches', async () => {
  const loader = Loader.start({ files, batchSize: 4, workers: 2, prefetchFactor: 2, prepMs: 0, seed: 1 });
  try {
    const batches = await collect(loader, 0, 1);
    assert.equal(batches.length, 1);
  } finally {
    await loader.close();
  }
});

test('a missing file fails the epoch with a message naming it', async () => {
  const loader = Loader.start({ files: [...files.slice(0, 3), join(dir, 'missing.bin')], batchSize: 4, workers: 2, prefetchFactor: 1, prepMs: 0, seed: 1 });
  try {
    await assert.rejects(collect(loader, 0), /could not build batch 0 of epoch 0: .*missing\.bin/);
  } finally {
    await loader.close();
  }
});

test('prepareSample takes at least prepMs of wall clock after the read; decode overruns are counted', () => {
  const startMs = performance.now();
  const sample = prepareSample(files[0], 15);
  assert.ok(performance.now() - startMs >= 15);
  assert.equal(sample.bytes, sizes[0]);
  assert.ok(Number.isFinite(sample.digest));
  const batch = prepareBatch(files.slice(0, 3), 1e-6);
  assert.equal(batch.samples, 3);
  assert.equal(batch.overruns, 3, 'decoding takes longer than a nanosecond');
  assert.equal(prepareBatch(files.slice(0, 3), 0).overruns, 0, 'no prep time asked: nothing to overrun');
});

test('onDecodeOverrun is called once when decoding systematically exceeds prepMs', async () => {
  const calls: number[] = [];
  const loader = Loader.start({
    files,
    batchSize: 4,
    workers: 2,
    prefetchFactor: 2,
    prepMs: 1e-6,
    seed: 1,
    onDecodeOverrun: (overrun) => calls.push(overrun.overruns),
  });
  try {
    await collect(loader, 0);
    assert.equal(calls.length, 1);
    assert.ok(calls[0] >= 8);
  } finally {
    await loader.close();
  }
});
