import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nearestRank, tailQuantiles } from '../src/quantile.js';

test('nearest-rank quantiles are values measured, never interpolated', () => {
  const sorted = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  assert.equal(nearestRank(sorted, 0.5), 5);
  assert.equal(nearestRank(sorted, 0.95), 10);
  assert.equal(nearestRank(sorted, 0), 1);
});

test('tailQuantiles sorts a copy, counts the values, and is null for none', () => {
  const values = [30, 10, 20, ...Array.from({ length: 97 }, (_, i) => 100 + i)];
  const copy = values.slice();
  // 100 values: p50 is the 50th smallest (146), p95 the 95th (191), p99 the 99th (195).
  assert.deepEqual(tailQuantiles(values), { p50: 146, p95: 191, p99: 195, n: 100 });
  assert.deepEqual(values, copy, 'the input is left in its order');
  assert.deepEqual(tailQuantiles([7]), { p50: 7, p95: 7, p99: 7, n: 1 });
  assert.equal(tailQuantiles([]), null);
});
