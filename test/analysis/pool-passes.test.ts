import assert from 'node:assert/strict';
import { test } from 'node:test';
import { poolPasses } from '../../src/analysis/pool-passes.js';
import { markWarmup } from '../../src/analysis/warmup.js';
import type { Iteration } from '../../src/schema/profile.js';
import { reportData } from '../../src/report/report-data.js';
import { modeResult } from './modes.js';

// One run of the cached mode: `warmup` slow iterations, then `measured` at `ms` each.
function cachedRun(startedAt: number, warmup: number, measured: number, ms: number) {
  const times = [
    ...Array.from({ length: warmup }, () => 5 * ms),
    ...Array.from({ length: measured }, (_, k) => ms + (k % 3)),
  ];
  const iterations: Iteration[] = times.map((t, i) => ({
    i,
    t: startedAt + i * ms,
    waitMs: 0,
    computeMs: t,
    samples: 32,
  }));
  const result = modeResult('cached', { iterMs: ms + 1 });
  const summary = { ...result.summary!, warmupIterations: warmup, measuredIterations: measured, medianIterMs: ms + 1 };
  return {
    ...result,
    startedAt,
    summary,
    ranks: [{ ...result.ranks[0], iterations: markWarmup(iterations, warmup), summary }],
  };
}

test('markWarmup flags the iterations with the lowest indices, whatever their order', () => {
  const iterations = [3, 0, 2, 1].map((i) => ({ i }));
  assert.deepEqual(markWarmup(iterations, 2), [{ i: 3 }, { i: 0, warmup: true }, { i: 2 }, { i: 1, warmup: true }]);
  assert.deepEqual(markWarmup(iterations, 0), iterations);
});

test("a mode pooled over two runs keeps each run's warm-up, and its median is over both runs' measured iterations", () => {
  const pooled = poolPasses([
    { label: 'cached #1', result: cachedRun(1_700_000_000_000, 4, 30, 10) },
    { label: 'cached #2', result: cachedRun(1_700_000_100_000, 6, 30, 20) },
  ]).modes.cached!;
  const iterations = pooled.ranks[0].iterations;
  assert.equal(iterations.length, 70);
  assert.deepEqual(
    iterations.filter((it) => it.warmup).map((it) => it.i),
    [0, 1, 2, 3, 34, 35, 36, 37, 38, 39],
    'run 2 starts at index 34; its warm-up is its first 6',
  );
  assert.equal(pooled.summary!.warmupIterations, 10);
  // Measured: 10, 11, 12 (x10 each) and 20, 21, 22 (x10 each): the middle of the 60 lies between 12 and 20.
  assert.equal(pooled.summary!.medianIterMs, 16);
  assert.equal(pooled.ranks[0].summary!.medianIterMs, 16);

  const chart = reportData({ modes: { cached: pooled }, host: { cpus: 2 } } as never, null as never).iterations[0];
  assert.deepEqual(
    chart.warmupPoints.map(([i]) => i),
    [0, 1, 2, 3, 34, 35, 36, 37, 38, 39],
    "the chart marks both runs' warm-ups",
  );
  assert.ok(
    chart.blockMeans.every(([, ms]) => ms < 50),
    `no block mixes in a warm-up iteration (5x slower): ${JSON.stringify(chart.blockMeans)}`,
  );
});
