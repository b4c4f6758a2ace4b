import { test } from 'node:test';
import assert from 'node:assert/strict';
import { awaitingEpochBoundary } from '../../src/profile/block-stop.js';
import type { EpochEvent } from '../../src/schema/events.js';
import type { Iteration } from '../../src/schema/profile.js';

const epoch = (n: number, i: number, epochIterations: number | null): EpochEvent => ({
  v: 1,
  t: 0,
  rank: 0,
  type: 'epoch',
  epoch: n,
  i,
  createMs: 1,
  firstWaitMs: 1,
  epochIterations,
});
const ran = (n: number): Iteration[] =>
  Array.from({ length: n }, (_, i) => ({ i, t: i, waitMs: 0, computeMs: 1, samples: 1 }));

test('a precision stop waits for the first epoch boundary when it is near and within the budget', () => {
  // 100 iterations run, the epoch ends at 150: wait.
  assert.equal(awaitingEpochBoundary([{ epochs: [epoch(0, 0, 150)], iterations: ran(100) }], 1000), true);
  // The boundary crossed: no more waiting.
  assert.equal(
    awaitingEpochBoundary([{ epochs: [epoch(0, 0, 150), epoch(1, 150, 150)], iterations: ran(151) }], 1000),
    false,
  );
  // Far away (more than 3x what ran), past the budget, or of unknown length: the first epoch's start stands in.
  assert.equal(awaitingEpochBoundary([{ epochs: [epoch(0, 0, 5000)], iterations: ran(100) }], 10000), false);
  assert.equal(awaitingEpochBoundary([{ epochs: [epoch(0, 0, 150)], iterations: ran(100) }], 120), false);
  assert.equal(awaitingEpochBoundary([{ epochs: [epoch(0, 0, null)], iterations: ran(100) }], 1000), false);
  // A job that reports no epochs (the emulated job, an older hook) never waits.
  assert.equal(awaitingEpochBoundary([{ epochs: [], iterations: ran(100) }], 1000), false);
});
