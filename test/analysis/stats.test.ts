import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { batchMeans, mean, median, tQuantile975 } from '../../src/analysis/stats.js';
import { normal, prng } from './series.js';

// Reference values from R's qt(0.975, df).
const T_REFERENCE: [number, number][] = [
  [1, 12.706205],
  [2, 4.302653],
  [3, 3.182446],
  [5, 2.570582],
  [9, 2.262157],
  [10, 2.228139],
  [29, 2.04523],
  [30, 2.042272],
  [31, 2.039513],
  [35, 2.030108],
  [40, 2.021075],
  [60, 2.000298],
  [100, 1.983972],
  [120, 1.97993],
  [1000, 1.962339],
];

test('tQuantile975 matches reference quantiles to 3 decimals', () => {
  for (const [df, expected] of T_REFERENCE) {
    assert.ok(Math.abs(tQuantile975(df) - expected) < 5e-4, `df=${df}: ${tQuantile975(df)} vs ${expected}`);
  }
  assert.ok(Math.abs(tQuantile975(Infinity) - 1.959964) < 1e-6);
});

test('tQuantile975 handles fractional df (Welch) to 3 decimals', () => {
  // qt(0.975, df) for fractional df.
  for (const [df, expected] of [
    [1.01, 12.412738],
    [1.25, 8.027951],
    [1.5, 6.016663],
    [1.93, 4.455714],
    [2.5, 3.574655],
    [3.7, 2.867521],
    [4.5, 2.658912],
    [9.3, 2.251082],
    [29.5, 2.043725],
  ]) {
    // Three significant digits.
    assert.ok(Math.abs(tQuantile975(df) / expected - 1) < 1e-3, `df=${df}: ${tQuantile975(df)} vs ${expected}`);
  }
});

test('tQuantile975 decreases with df and stays above the normal quantile', () => {
  fc.assert(
    fc.property(
      fc.double({ min: 1, max: 1e6, noNaN: true }),
      fc.double({ min: 0.01, max: 100, noNaN: true }),
      (df, step) => {
        const a = tQuantile975(df);
        const b = tQuantile975(df + step);
        return b <= a + 1e-12 && b > 1.959963;
      },
    ),
  );
});

test('tQuantile975 rejects df < 1', () => {
  assert.throws(() => tQuantile975(0), RangeError);
  assert.throws(() => tQuantile975(Number.NaN), RangeError);
});

test('mean and median', () => {
  assert.equal(mean([1, 2, 3, 10]), 4);
  assert.equal(median([10, 1, 3]), 3);
  assert.equal(median([10, 1, 3, 2]), 2.5);
  assert.ok(Number.isNaN(mean([])));
  assert.ok(Number.isNaN(median([])));
});

test('batchMeans: hand-computed blocks, t interval from block means', () => {
  const values = Array.from({ length: 12 }, (_, i) => i + 1);
  const r = batchMeans(values, 4);
  // Block means 2.5, 6.5, 10.5: sd 4, df 2.
  assert.equal(r.blocks, 3);
  assert.equal(r.mean, 6.5);
  assert.ok(Math.abs(r.halfWidth! - (4.302653 * 4) / Math.sqrt(3)) < 1e-4);
});

test('batchMeans drops the incomplete tail block from mean and interval', () => {
  const whole = batchMeans([1, 1, 3, 3], 2);
  const withTail = batchMeans([1, 1, 3, 3, 1000], 2);
  assert.deepEqual(withTail, whole);
  assert.equal(whole.mean, 2);
});

test('batchMeans: no half-width with fewer than 2 blocks', () => {
  assert.deepEqual(batchMeans([4, 6, 8], 4), { mean: 6, halfWidth: null, blocks: 0 });
  assert.deepEqual(batchMeans([4, 6, 8, 10, 12], 4), { mean: 7, halfWidth: null, blocks: 1 });
  assert.throws(() => batchMeans([1, 2], 0), RangeError);
  assert.throws(() => batchMeans([1, 2], 1.5), RangeError);
});

test('batchMeans 95% CI covers the true mean in about 95% of 200 seeded runs', () => {
  for (const cv of [0.02, 0.2, 0.6]) {
    let covered = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const g = normal(prng(seed * 7919));
      const values = Array.from({ length: 300 }, () => 100 * (1 + cv * g()));
      const r = batchMeans(values, 6);
      if (Math.abs(r.mean - 100) <= r.halfWidth!) covered++;
    }
    // Binomial(200, 0.95) lies in [180, 197] with probability > 0.99.
    assert.ok(covered >= 180 && covered <= 198, `cv ${cv}: covered ${covered}/200`);
  }
});

test('batchMeans CI stays honest on bursty, autocorrelated-within-block data', () => {
  // A short AR(1) correlation (phi 0.5) plus a period-2 burst: blocks of 8 absorb both.
  let covered = 0;
  for (let seed = 1; seed <= 200; seed++) {
    const g = normal(prng(seed));
    let e = 0;
    const values = Array.from({ length: 400 }, (_, i) => {
      e = 0.5 * e + g() * 20;
      return (i % 2 === 0 ? 434 : 0) + 50 + e;
    });
    const r = batchMeans(values, 8);
    if (Math.abs(r.mean - 267) <= r.halfWidth!) covered++;
  }
  assert.ok(covered >= 170, `covered ${covered}/200`);
});
