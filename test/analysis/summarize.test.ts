import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IterationSummarySchema } from '../../src/schema/profile.js';
import { blockSizeFor, MAX_BLOCKS, summarizeIterations } from '../../src/analysis/summarize.js';
import { median } from '../../src/analysis/stats.js';
import { bursty, series } from './series.js';

test('block size covers whole delivery periods, at least 5', () => {
  const cases: [number | null, number][] = [
    [null, 5],
    [0, 5],
    [1, 5],
    [2, 6],
    [3, 6],
    [4, 8],
    [5, 5],
    [8, 8],
    [16, 16],
  ];
  for (const [workers, expected] of cases) assert.equal(blockSizeFor(workers), expected, `workers ${workers}`);
});

test('bursty W-worker delivery: mean wait is ~217 ms although the median wait is ~0', () => {
  // 4 workers: one wait of 868 ms then three of 0.3 ms (mean 217 ms).
  const its = bursty(2000, 4, 868, 11, 0.05);
  assert.ok(median(its.map((it) => it.waitMs)) < 1, 'the median wait of the input is ~0');
  const s = summarizeIterations(its, { workers: 4 })!;
  // Whole delivery periods of 8, grown so that there are at most MAX_BLOCKS blocks.
  assert.equal(s.blockSize % 8, 0);
  assert.ok(s.blocks <= MAX_BLOCKS && s.blocks >= MAX_BLOCKS / 2, `blocks ${s.blocks}`);
  assert.ok(Math.abs(s.waitMs.mean - 217.2) < 217.2 * 0.03, `waitMs.mean ${s.waitMs.mean}`);
  assert.ok(Math.abs(s.iterMs.mean - 267.2) < 267.2 * 0.03, `iterMs.mean ${s.iterMs.mean}`);
  assert.ok(s.medianIterMs < 60, 'the median iteration hides the stall; the summary reports it only for contrast');
  // Whole periods in each block: the block means barely vary, so the CI is tight.
  assert.ok(s.relativePrecision! < 0.01, `relative precision ${s.relativePrecision}`);
});

test('bursty W = 2 (450, 0, 450, 0 ms) over noise levels', () => {
  for (const cv of [0.01, 0.1, 0.3]) {
    for (let seed = 1; seed <= 10; seed++) {
      const s = summarizeIterations(bursty(600, 2, 450, seed, cv), { workers: 2 })!;
      assert.ok(s.warmupIterations <= 6, `cv ${cv} seed ${seed}: warm-up ${s.warmupIterations}`);
      const tol = Math.max(3 * s.waitMs.halfWidth!, 2);
      assert.ok(Math.abs(s.waitMs.mean - 225.15) < tol, `cv ${cv} seed ${seed}: wait ${s.waitMs.mean} +- ${tol}`);
    }
  }
});

test('summary shape: warm-up removed, whole blocks, parts add up, schema-valid', () => {
  const its = series({ n: 503, seed: 5, computeMs: 80, waitMs: () => 20, cv: 0.1, slowStart: 10, slowFactor: 5 });
  const s = summarizeIterations(its, { workers: 3 })!;
  IterationSummarySchema.parse(s);
  // (503 - warm-up) / (30 blocks x 6) rounds up to 3 periods per block.
  assert.equal(s.blockSize, 18);
  assert.ok(s.warmupIterations >= 10 && s.warmupIterations <= 15, `warm-up ${s.warmupIterations}`);
  assert.equal(s.measuredIterations, s.blocks * s.blockSize);
  assert.ok(503 - s.warmupIterations - s.measuredIterations < s.blockSize);
  assert.ok(Math.abs(s.iterMs.mean - (s.waitMs.mean + s.computeMs.mean)) < 1e-9);
  assert.ok(Math.abs(s.iterMs.mean - 100) < 3, `iterMs ${s.iterMs.mean}`);
  assert.equal(s.samplesPerIter, 32);
  assert.ok(Math.abs(s.samplesPerSec - 32 / (s.iterMs.mean / 1000)) < 1e-6);
  assert.equal(s.relativePrecision, s.iterMs.halfWidth! / s.iterMs.mean);
  assert.equal(s.iterMs.proven, true);
});

test('estimates track the truth across noise levels', () => {
  for (const cv of [0.01, 0.05, 0.2, 0.5]) {
    let covered = 0;
    for (let seed = 1; seed <= 50; seed++) {
      const s = summarizeIterations(series({ n: 400, seed: seed * 31, computeMs: 100, cv }), { workers: 2 })!;
      if (Math.abs(s.iterMs.mean - 100) <= s.iterMs.halfWidth!) covered++;
      assert.ok(s.relativePrecision! < cv, `cv ${cv}: precision ${s.relativePrecision}`);
    }
    assert.ok(covered >= 42, `cv ${cv}: CI covered the truth in ${covered}/50`);
  }
});

test('iterations out of order give the same summary', () => {
  const its = series({ n: 200, seed: 9, computeMs: 50, waitMs: (i) => (i % 2 ? 30 : 0), cv: 0.2 });
  const shuffled = [...its].reverse();
  assert.deepEqual(summarizeIterations(shuffled, { workers: 2 }), summarizeIterations(its, { workers: 2 }));
});

test('null with fewer than 2 (or minBlocks) whole blocks', () => {
  assert.equal(summarizeIterations([], { workers: null }), null);
  assert.equal(summarizeIterations(series({ n: 10, seed: 1, computeMs: 10 }), { workers: null }), null);
  // 11 iterations: iteration 0 goes, 10 remain = 2 blocks of 5.
  assert.notEqual(summarizeIterations(series({ n: 11, seed: 1, computeMs: 10 }), { workers: null }), null);
  const its = series({ n: 60, seed: 1, computeMs: 10 });
  assert.notEqual(summarizeIterations(its, { workers: 2, minBlocks: 9 }), null);
  assert.equal(summarizeIterations(its, { workers: 2, minBlocks: 10 }), null);
});

test('samplesPerSec is total samples over total time, not the mean of per-iteration rates', () => {
  // Alternating 10 ms / 190 ms iterations of 10 samples: 100 samples/s overall
  // (the mean of per-iteration rates would be ~526/s).
  const its = Array.from({ length: 101 }, (_, i) => ({
    i,
    t: i * 100,
    waitMs: i % 2 ? 180 : 0,
    computeMs: 10,
    samples: 10,
  }));
  const s = summarizeIterations(its, { workers: 2 })!;
  assert.ok(Math.abs(s.samplesPerSec - 100) < 1e-9, String(s.samplesPerSec));
  assert.equal(s.iterMs.mean, 100);
});
