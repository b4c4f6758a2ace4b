import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { warmForCachedMode, subsetTargetBytes } from '../../src/profile/cached-subset.js';
import { pickFiles, prefixEnd, seededOrder, sortedIndices } from '../../src/system/dataset/resident-subset.js';
import { FileTableBuilder, fileView, tableOf } from '../../src/system/dataset/file-table.js';
import type { Dataset, DatasetFile } from '../../src/system/dataset/dataset.js';

const MiB = 2 ** 20;

/** A table-backed dataset: `dirs` folders of `perDir` files, sizes from `size(i)`. */
function dataset(dirs: number, perDir: number, size: (i: number) => number, budget: number | null): Dataset {
  const builder = new FileTableBuilder();
  let i = 0;
  for (let d = 0; d < dirs; d++) {
    const files = Array.from({ length: perDir }, (_, k) => ({
      name: `f${String(k).padStart(4, '0')}`,
      bytes: size(i++),
      foreign: false,
    }));
    builder.addDirectory(`/data/c${String(d).padStart(3, '0')}/`, files);
  }
  const table = builder.build();
  const bytes = table.totalBytes();
  return {
    roots: ['/data'],
    files: fileView(table) as DatasetFile[],
    bytes,
    meanFileBytes: bytes / table.length,
    fileBytesQuantiles: { p10: 0, p50: 0, p90: 0, max: 0 },
    device: null,
    fitsInMemory: budget !== null && bytes <= budget,
    memoryBudgetBytes: budget,
    memoryBudgetSource: 'a fake budget',
    skippedEntries: 0,
  };
}

/** A warm that records what it was given and advances a fake clock by `msPerMiB`. */
function fakeWarm(clock: { ms: number }, msPerMiB: number) {
  const calls: DatasetFile[][] = [];
  return {
    calls,
    warm: async (files: readonly DatasetFile[]) => {
      calls.push([...files]);
      clock.ms += (files.reduce((s, f) => s + f.bytes, 0) / MiB) * msPerMiB;
    },
  };
}

describe('subset choice', () => {
  test('the seeded order is a permutation, the same for a seed and different across seeds', () => {
    const a = seededOrder(1000, 7);
    assert.deepEqual(
      [...a].sort((x, y) => x - y),
      Array.from({ length: 1000 }, (_, i) => i),
    );
    assert.deepEqual(seededOrder(1000, 7), a);
    assert.notDeepEqual(seededOrder(1000, 8), a);
  });

  test('the prefix stops at the first file that overflows instead of skipping it for a smaller one (no bias toward small files)', () => {
    const order = Uint32Array.from([0, 1, 2, 3]);
    const sizes = [4, 10, 1, 1];
    assert.equal(prefixEnd(order, sizes, 0, 0, 12), 1);
    assert.equal(prefixEnd(order, sizes, 0, 0, 16), 4);
    assert.equal(prefixEnd(order, sizes, 2, 14, 15), 3);
  });

  test('over many seeds, the subset mean file size matches the dataset (sizes 1..100 KiB)', () => {
    const ds = dataset(10, 100, (i) => (((i * 37) % 100) + 1) * 1024, null);
    const sizes = tableOf(ds.files)!.sizes;
    let meanRatio = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const order = seededOrder(sizes.length, seed);
      const end = prefixEnd(order, sizes, 0, 0, ds.bytes / 4);
      const picked = sortedIndices(order, 0, end);
      meanRatio +=
        Array.from(picked, (i) => sizes[i]).reduce((a, b) => a + b, 0) / picked.length / ds.meanFileBytes / 40;
    }
    assert.ok(Math.abs(meanRatio - 1) < 0.03, `subset mean / dataset mean ${meanRatio}`);
  });

  test('picked files come back as a table view with their paths and sizes, in path order', () => {
    const ds = dataset(3, 4, (i) => i + 1, null);
    const picked = pickFiles(ds.files, Uint32Array.from([1, 4, 5, 11]));
    assert.ok(tableOf(picked), 'a compact table');
    assert.deepEqual(
      [...picked],
      [
        { path: '/data/c000/f0001', bytes: 2 },
        { path: '/data/c001/f0000', bytes: 5 },
        { path: '/data/c001/f0001', bytes: 6 },
        { path: '/data/c002/f0003', bytes: 12 },
      ],
    );
  });
});

describe('warming for the cached mode', () => {
  test('a dataset larger than the budget: a random subset of half the budget left after the job reserve, warmed and recorded', async () => {
    const budget = 612 * MiB;
    const ds = dataset(20, 50, () => 1.5 * MiB, budget); // 1000 files, 1.46 GiB
    const clock = { ms: 0 };
    const { warm, calls } = fakeWarm(clock, 1);
    const plan = await warmForCachedMode(ds, { warm, now: () => clock.ms, seed: 3 });
    assert.ok(plan.subset);
    assert.equal(plan.subset.reason, 'does-not-fit');
    assert.equal(subsetTargetBytes(budget), 178 * MiB);
    assert.ok(plan.dataset.bytes <= 178 * MiB && plan.dataset.bytes > 178 * MiB - 1.5 * MiB, `${plan.dataset.bytes}`);
    assert.equal(subsetTargetBytes(200 * MiB), 0, 'no room left for a subset');
    assert.equal(plan.subset.files, plan.dataset.files.length);
    assert.equal(plan.subset.datasetFiles, 1000);
    assert.equal(plan.subset.budgetBytes, budget);
    assert.equal(plan.dataset.fitsInMemory, true);
    const warmed = new Set(calls.flat().map((f) => f.path));
    assert.deepEqual(new Set([...plan.dataset.files].map((f) => f.path)), warmed, 'exactly the subset was warmed');
    assert.ok(new Set([...plan.dataset.files].map((f) => f.path.slice(0, 11))).size > 10, 'spread over the folders');
    assert.match(
      plan.subset.how,
      /half of the memory budget of 612\.0 MiB \(a fake budget\) less 256\.0 MiB for the job/,
    );
    const again = await warmForCachedMode(ds, { warm: fakeWarm({ ms: 0 }, 1).warm, now: () => 0, seed: 3 });
    assert.deepEqual(
      [...again.dataset.files],
      [...plan.dataset.files],
      'the same seed, the same subset (both passes of the cached mode)',
    );
  });

  test('a dataset that fits and warms fast is warmed whole, with no subset', async () => {
    const ds = dataset(4, 50, () => MiB, 1024 * MiB);
    const clock = { ms: 0 };
    const { warm, calls } = fakeWarm(clock, 10); // 200 MiB at 10 ms/MiB: 2 s
    const plan = await warmForCachedMode(ds, { warm, now: () => clock.ms, warmLimitSec: 60 });
    assert.equal(plan.subset, undefined);
    assert.equal(plan.dataset, ds);
    assert.equal(calls[calls.length - 1].length, 200, 'after the first part, the whole dataset in table order');
  });

  test('a dataset that fits but would warm for longer than the limit: the mode runs on what was warmed by then', async () => {
    const ds = dataset(4, 100, () => MiB, 1024 * MiB); // 400 MiB
    const clock = { ms: 0 };
    const { warm } = fakeWarm(clock, 1000); // 1 s a MiB: 400 s for all
    const plan = await warmForCachedMode(ds, { warm, now: () => clock.ms, warmLimitSec: 60 });
    assert.ok(plan.subset);
    assert.equal(plan.subset.reason, 'warm-time');
    assert.equal(plan.subset.budgetBytes, null);
    // Parts of 25 MiB: the limit is passed after the third part.
    assert.equal(plan.subset.files, 75);
    assert.match(plan.subset.how, /longer than 60 s/);
  });

  test('budget unknown: the whole dataset as before (the proof then says it does not fit)', async () => {
    const ds = dataset(2, 10, () => MiB, null);
    const { warm, calls } = fakeWarm({ ms: 0 }, 1);
    const plan = await warmForCachedMode(ds, { warm });
    assert.equal(plan.subset, undefined);
    assert.equal(calls.length, 1);
  });
});
