import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { fitDrift, poolRuns, type RunPoint } from '../../src/analysis/drift.js';
import { tQuantile975 } from '../../src/analysis/stats.js';

// The mirrored schedule: synthetic, cached, cold, cold, cached, synthetic, 60 s apart.
const ORDER = ['synthetic', 'cached', 'cold', 'cold', 'cached', 'synthetic'];
const BASE: Record<string, number> = { synthetic: 100, cached: 130, cold: 180 };

function schedule(slopePerSec: number, jitter: number[] = [0, 0, 0, 0, 0, 0], seMs: number | null = 1): RunPoint[] {
  return ORDER.map((group, k) => ({
    group,
    midSec: 60 * k,
    meanMs: BASE[group] * Math.exp(slopePerSec * 60 * k) * (1 + jitter[k]),
    seMs,
  }));
}

test('a steady drift is fitted and leaves no run-to-run scatter', () => {
  const fit = fitDrift(schedule(0.001))!;
  assert.ok(Math.abs(fit.slopePerSec! - 0.001) < 1e-9, `slope ${fit.slopePerSec}`);
  assert.equal(fit.runToRunRelVariance, 0);
  assert.equal(fit.df, 2, 'six runs less three modes less the slope');
});

test('scatter beyond the in-run noise is run-to-run variance; within it, none', () => {
  const jumpy = fitDrift(schedule(0, [0.05, -0.04, 0.03, -0.05, 0.04, -0.03], 0.1))!;
  assert.ok(jumpy.runToRunRelVariance > 0.03 ** 2, `${jumpy.runToRunRelVariance}`);
  // The same scatter, but each run's own standard error is larger: nothing left over.
  const noisy = fitDrift(schedule(0, [0.005, -0.004, 0.003, -0.005, 0.004, -0.003], 10))!;
  assert.equal(noisy.runToRunRelVariance, 0);
});

test('without enough runs for a slope the scatter is taken around each mode alone; one run each gives nothing', () => {
  const twice = fitDrift([
    { group: 'cached', midSec: 0, meanMs: 100, seMs: 0.1 },
    { group: 'cached', midSec: 60, meanMs: 110, seMs: 0.1 },
  ])!;
  assert.equal(twice.slopePerSec, null);
  assert.equal(twice.df, 1);
  assert.ok(twice.runToRunRelVariance > 0.002);
  assert.equal(fitDrift(schedule(0.001).slice(0, 3)), null);
});

test('pooling weights the runs equally, so a steady drift cancels whatever their lengths', () => {
  fc.assert(
    fc.property(
      fc.double({ min: -0.003, max: 0.003, noNaN: true }),
      fc.double({ min: 0.1, max: 5, noNaN: true }),
      (slope, se) => {
        // Symmetric runs around the middle: the equal-weight mean is the pace at the middle whatever their errors.
        const first = 100 * (1 - slope * 120);
        const second = 100 * (1 + slope * 120);
        const pooled = poolRuns(
          [
            { meanMs: first, seMs: se, df: 9 },
            { meanMs: second, seMs: 4 * se, df: 29 },
          ],
          null,
          tQuantile975,
        );
        return Math.abs(pooled.meanMs - 100) < 1e-9;
      },
    ),
  );
});

test('the interval grows with the run-to-run variance and its few degrees of freedom', () => {
  const runs = [
    { meanMs: 100, seMs: 1, df: 20 },
    { meanMs: 104, seMs: 1, df: 20 },
  ];
  const inRun = poolRuns(runs, null, tQuantile975);
  // Only in-run noise: sqrt(1 + 1)/2 with about 40 df.
  assert.ok(Math.abs(inRun.halfWidthMs! - tQuantile975(inRun.df!) * Math.SQRT1_2) < 1e-9);
  assert.ok(inRun.df! > 35 && inRun.df! < 41);
  const withScatter = poolRuns(runs, { varianceMs2: 16, df: 2 }, tQuantile975);
  // Var = 0.5 + 16/2 = 8.5, dominated by the part with 2 df: t near 4, not the normal 1.96.
  assert.ok(withScatter.df! < 2.5, `df ${withScatter.df}`);
  assert.ok(withScatter.halfWidthMs! > 3.5 * Math.sqrt(8.5), `±${withScatter.halfWidthMs}`);
  assert.equal(poolRuns([{ meanMs: 100, seMs: null, df: 1 }], null, tQuantile975).halfWidthMs, null);
});
