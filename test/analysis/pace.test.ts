import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RankResult } from '../../src/schema/profile.js';
import { pickPaceRank } from '../../src/analysis/pace.js';
import { summarizeIterations } from '../../src/analysis/summarize.js';
import { series } from './series.js';

function rank(r: number, computeMs: number | null): RankResult {
  const iterations = computeMs === null ? [] : series({ n: 100, seed: r + 1, computeMs, cv: 0.02 });
  return { rank: r, pid: 1000 + r, workers: 2, iterations, summary: summarizeIterations(iterations, { workers: 2 }) };
}

test('the slowest rank sets the pace', () => {
  const ranks = [rank(0, 100), rank(1, 130), rank(2, 90)];
  assert.equal(pickPaceRank(ranks)!.rank, 1);
  assert.equal(pickPaceRank([...ranks].reverse())!.rank, 1);
});

test('ranks without a summary are skipped; none gives null', () => {
  assert.equal(pickPaceRank([rank(0, null), rank(1, 80)])!.rank, 1);
  assert.equal(pickPaceRank([rank(0, null)]), null);
  assert.equal(pickPaceRank([]), null);
});

test('ties go to the lowest rank', () => {
  const a = rank(3, 100);
  const b = { ...a, rank: 1 };
  assert.equal(pickPaceRank([a, b])!.rank, 1);
});

test('ranks that synchronise run at one pace: the one waiting for its data sets it, not the one slower by a hair', () => {
  // Rank 1's loader falls 15 ms behind each iteration; rank 0 waits those 15 ms at the all-reduce, inside its step.
  const waiting = (r: number, computeMs: number, waitMs: number): RankResult => {
    const iterations = series({ n: 100, seed: r + 7, computeMs, waitMs: () => waitMs, cv: 0.02 });
    return { rank: r, pid: 1000 + r, workers: 1, iterations, summary: summarizeIterations(iterations, { workers: 1 }) };
  };
  const ranks = [waiting(0, 74, 0.2), waiting(1, 59, 15)];
  assert.ok(ranks[0].summary!.iterMs.mean > ranks[1].summary!.iterMs.mean, 'rank 0 is slower by a hair');
  assert.equal(pickPaceRank(ranks)!.rank, 1);
  assert.equal(pickPaceRank([...ranks].reverse())!.rank, 1);
  // Ranks at paces apart beyond noise (no collective between them): the slowest still sets it.
  assert.equal(pickPaceRank([waiting(0, 120, 0), waiting(1, 59, 15)])!.rank, 0);
});
