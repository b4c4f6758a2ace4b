import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ModeResult, RankResult } from '../../src/schema/profile.js';
import { findStraggler, rankWaits } from '../../src/analysis/straggler.js';
import { summarizeIterations } from '../../src/analysis/summarize.js';
import { markWarmup } from '../../src/analysis/warmup.js';
import { series } from './series.js';

/** A rank whose loader makes it wait `waitMs` per iteration beside a step of `stepMs`. */
function rank(r: number, stepMs: number, waitMs: number, hostname = 'gpu-a'): RankResult {
  const raw = series({ n: 120, seed: 11 + r, computeMs: stepMs, waitMs: () => waitMs, cv: 0.03 });
  const summary = summarizeIterations(raw, { workers: 2 });
  return {
    rank: r,
    node: { hostname, nodeRank: hostname === 'gpu-a' ? 0 : 1 },
    pid: 100 + r,
    workers: 2,
    iterations: markWarmup(raw, summary?.warmupIterations ?? 0),
    summary,
  };
}

function mode(name: 'cached' | 'cold', ranks: RankResult[]): ModeResult {
  return { mode: name, ranks } as unknown as ModeResult;
}

test('the rank that waits for its data already in the cached mode is the straggler, by its loader (prep)', () => {
  // Rank 1 waits 15 ms for its batch; rank 0 waits those 15 ms at the all-reduce, inside its step.
  const cached = mode('cached', [rank(0, 74, 0.3), rank(1, 59, 15)]);
  const cold = mode('cold', [rank(0, 75, 0.5), rank(1, 59, 16)]);
  const straggler = findStraggler({ cached, cold })!;
  assert.equal(straggler.rank, 1);
  assert.equal(straggler.mode, 'cold');
  assert.equal(straggler.cause, 'prep');
  assert.equal(straggler.leastWaitingRank, 0);
  assert.ok(Math.abs(straggler.extraWaitMs.mean - 15.5) < 1.5, String(straggler.extraWaitMs.mean));
  assert.match(
    straggler.text,
    /^rank 1 \(local rank 1 on node gpu-a, node rank 0\) is the straggler: in the cold mode it waits 1\d\.\d ± [\d.]+ ms more/,
  );
  assert.match(straggler.text, /its loader's CPU/);
});

test('a rank behind only when the data comes from storage is a straggler by its storage (fetch)', () => {
  const cached = mode('cached', [rank(0, 60, 0.3), rank(1, 60, 0.3, 'gpu-b')]);
  const cold = mode('cold', [rank(0, 80, 0.5), rank(1, 60, 20, 'gpu-b')]);
  const straggler = findStraggler({ cached, cold })!;
  assert.equal(straggler.rank, 1);
  assert.equal(straggler.cause, 'fetch');
  assert.deepEqual(straggler.node, { hostname: 'gpu-b', nodeRank: 1 });
  assert.equal(straggler.localRank, 0, 'the only rank on its node');
  assert.match(straggler.text, /its storage/);
});

test('ranks whose waits agree within noise have no straggler; one rank has none; without a cold mode the cached one is judged', () => {
  assert.equal(
    findStraggler({
      cached: mode('cached', [rank(0, 60, 5), rank(1, 60, 5.1)]),
      cold: mode('cold', [rank(0, 60, 5), rank(1, 60, 5.2)]),
    }),
    null,
  );
  assert.equal(findStraggler({ cold: mode('cold', [rank(0, 60, 9)]) }), null);
  assert.equal(findStraggler({}), null);
  const onlyCached = findStraggler({ cached: mode('cached', [rank(0, 70, 0.2), rank(1, 55, 15)]) })!;
  assert.equal(onlyCached.mode, 'cached');
  assert.equal(onlyCached.cause, 'prep');
});

test("each rank's wait quantiles come from its measured iterations, in rank order", () => {
  const waits = rankWaits(mode('cold', [rank(1, 59, 16), rank(0, 75, 0.5)]));
  assert.deepEqual(
    waits.map((w) => w.rank),
    [0, 1],
  );
  const q = waits[1].waitQuantilesMs!;
  assert.ok(q.p50 <= q.p95 && q.p95 <= q.p99 && Math.abs(q.p50 - 16) < 2, JSON.stringify(q));
});
