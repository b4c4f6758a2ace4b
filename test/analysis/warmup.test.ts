import { test } from 'node:test';
import assert from 'node:assert/strict';
import { detectWarmup } from '../../src/analysis/warmup.js';
import { bursty, iterTimes, series } from './series.js';

const NOISE = [0.01, 0.05, 0.2, 0.5];
const SEEDS = Array.from({ length: 40 }, (_, i) => i + 1);

test('detects a slow start: first 10 iterations 5x slower', () => {
  for (const cv of NOISE) {
    for (const seed of SEEDS) {
      const d = detectWarmup(iterTimes(series({ n: 400, seed, computeMs: 100, cv, slowStart: 10, slowFactor: 5 })));
      const low = cv <= 0.2 ? 10 : 5;
      assert.ok(d >= low && d <= 15, `cv ${cv} seed ${seed}: discarded ${d}`);
    }
  }
});

test('detects a gradual warm-up (exponential decay to steady state)', () => {
  for (const seed of SEEDS) {
    const x = iterTimes(series({ n: 600, seed, computeMs: 100, cv: 0.05 })).map((v, i) => v + 300 * Math.exp(-i / 8));
    const d = detectWarmup(x);
    // By i = 25 the excess is 13 ms (2.6 noise sd of one iteration); the rest is within noise.
    assert.ok(d >= 15 && d <= 60, `seed ${seed}: discarded ${d}`);
  }
});

test('keeps a stationary series whole (only iteration 0 goes)', () => {
  for (const cv of NOISE) {
    let cut = 0;
    for (const seed of SEEDS) {
      const d = detectWarmup(iterTimes(series({ n: 500, seed, computeMs: 100, cv })));
      assert.ok(d <= 25, `cv ${cv} seed ${seed}: discarded ${d}`);
      if (d > 1) cut++;
    }
    assert.ok(cut <= 4, `cv ${cv}: ${cut}/40 stationary series were cut`);
  }
});

test('does not cut into a stationary bursty series (W = 2 and W = 4)', () => {
  for (const workers of [2, 4]) {
    for (const cv of NOISE) {
      for (const seed of SEEDS) {
        const x = iterTimes(bursty(480, workers, 450 * (workers / 2), seed, cv));
        assert.ok(detectWarmup(x) <= 15, `W ${workers} cv ${cv} seed ${seed}: default batches`);
        assert.ok(detectWarmup(x, { batchSize: 8 }) <= 16, `W ${workers} cv ${cv} seed ${seed}: batches of 8`);
      }
    }
  }
});

test('a faster start (full prefetch queue) is a transient too', () => {
  const x = iterTimes(bursty(400, 2, 450, 3, 0.05)).map((v, i) => (i < 20 ? 50 : v));
  const d = detectWarmup(x);
  assert.ok(d >= 20 && d <= 25, `discarded ${d}`);
});

test('always discards at least iteration 0, never more than half', () => {
  assert.equal(detectWarmup(Array(100).fill(10)), 1);
  assert.equal(detectWarmup([]), 0);
  assert.equal(detectWarmup([5, 5, 5]), 1);
  assert.equal(detectWarmup(Array(100).fill(10), { minDiscard: 0 }), 0);
  // A series slow for its whole first 80%: MSER may not cut past half.
  const x = Array.from({ length: 100 }, (_, i) => (i < 80 ? 500 + (i % 3) : 100 + (i % 2)));
  assert.ok(detectWarmup(x) <= 50);
});
