import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { combinedHalfWidth, difference, excludesZero, liesAbove } from '../../src/analysis/estimate.js';
import { prepCpuSecPerSample } from '../../src/analysis/mode-rates.js';
import type { Estimate, ModeResult } from '../../src/schema/profile.js';

const e = (mean: number, halfWidth: number | null, proven = true): Estimate => ({ mean, halfWidth, proven });

test('difference: means subtract, half-widths combine as the root sum of squares, unknown when either is', () => {
  assert.deepEqual(difference(e(10, 3), e(4, 4)), e(6, 5));
  assert.deepEqual(difference(e(10, null), e(4, 4)), e(6, null));
  assert.equal(difference(e(10, 3, false), e(4, 4)).proven, false);
  assert.equal(combinedHalfWidth(3, 4, 12), 13);
  assert.equal(combinedHalfWidth(3, null), null);
});

test('liesAbove: the lower end of the interval clears the floor; without an interval the mean must', () => {
  assert.equal(liesAbove(e(5, 4)), true);
  assert.equal(liesAbove(e(5, 5)), false);
  assert.equal(liesAbove(e(5, 4), 1), false);
  assert.equal(liesAbove(e(0.1, null)), true);
  assert.equal(liesAbove(e(0, null)), false);
});

test('excludesZero: beyond noise either way, |mean| > half-width', () => {
  fc.assert(
    fc.property(
      fc.double({ min: -1e6, max: 1e6, noNaN: true }),
      fc.double({ min: 0, max: 1e6, noNaN: true }),
      (mean, halfWidth) => {
        return excludesZero(e(mean, halfWidth)) === Math.abs(mean) > halfWidth;
      },
    ),
  );
  assert.equal(excludesZero(e(-3, null)), true);
  assert.equal(excludesZero(e(0, null)), false);
});

test("prepCpuSecPerSample: the cached mode's CPU per sample less the synthetic mode's, null when either lacks it", () => {
  const mode = (jobCpuSecPerSample: number | null) => ({ jobCpuSecPerSample }) as ModeResult;
  assert.equal(prepCpuSecPerSample(mode(0.001), mode(0.005)), 0.004);
  assert.equal(prepCpuSecPerSample(mode(0.005), mode(0.001)), -0.004, 'not measurable: each caller decides');
  assert.equal(prepCpuSecPerSample(mode(null), mode(0.005)), null);
});
