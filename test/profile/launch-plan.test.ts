import assert from 'node:assert/strict';
import { test } from 'node:test';
import { launchPlan, profileCost, type ScheduleInput } from '../../src/profile/launch-plan.js';
import { FakeDataSource } from '../support/fake-data-source.js';
import type { ModeResult } from '../../src/schema/profile.js';
import type { Dataset } from '../../src/system/dataset/dataset.js';

const dataset = { fitsInMemory: true } as Dataset;
const base: ScheduleInput = { modes: ['synthetic', 'cached', 'cold'], dataSource: new FakeDataSource() };

test("the mirrored schedule as blocks of one launch, the middle mode's two runs back to back", () => {
  const plan = launchPlan(base, dataset, 2);
  assert.equal(plan.schedule, 'one-launch');
  assert.deepEqual(
    plan.blocks.map((b) => `${b.label}:${b.budgetShare}`),
    ['synthetic:0.5', 'cached:0.5', 'cold:0.5', 'cold-2:0.5', 'cached-2:0.5', 'synthetic-2:0.5'],
  );
  assert.deepEqual(plan.runs, []);
});

test('the CPU sweep keeps a launch a run after the one launch', () => {
  const plan = launchPlan({ ...base, cpuSweep: [1, 2] }, dataset, 1);
  assert.deepEqual(
    plan.blocks.map((b) => b.label),
    ['synthetic', 'cached', 'cold'],
  );
  assert.deepEqual(
    plan.runs.map((r) => r.label),
    ['cached-1cpu', 'cached-2cpu'],
  );
});

test('what keeps a launch a run is named: the flag, a workers sweep, the data source', () => {
  const reasons = [
    launchPlan({ ...base, separateLaunches: true }, dataset, 2),
    launchPlan({ ...base, workersSweep: [1, 2] }, dataset, 2),
    launchPlan({ ...base, dataSource: new FakeDataSource({ ownCounter: true }) }, dataset, 2),
    launchPlan({ ...base, dataSource: {} }, dataset, 2),
  ];
  for (const plan of reasons) {
    assert.equal(plan.schedule, 'separate-launches');
    assert.ok(plan.reason && plan.reason.length > 10, plan.reason ?? 'no reason');
    assert.equal(plan.blocks.length, 0);
    assert.ok(plan.runs.length >= 6);
  }
  assert.equal(new Set(reasons.map((p) => p.reason)).size, reasons.length, 'each obstacle has its own words');
});

test('one mode once needs no reason for its single launch', () => {
  const plan = launchPlan({ ...base, modes: ['cold'] }, dataset, 1);
  assert.equal(plan.schedule, 'separate-launches');
  assert.equal(plan.reason, null);
});

test("the cost: the pace rank's iterations after warm-up, against the wall time", () => {
  const it = (i: number, warmup = false) => ({
    i,
    t: i,
    waitMs: 50,
    computeMs: 50,
    samples: 1,
    ...(warmup ? { warmup: true as const } : {}),
  });
  const result = {
    paceRank: 1,
    ranks: [
      { rank: 0, iterations: [it(0), it(1)] },
      { rank: 1, iterations: [it(0, true), it(1), it(2), it(3)] },
    ],
  } as unknown as ModeResult;
  const cost = profileCost([result], { schedule: 'one-launch', reason: null, launches: 1, jobIterations: 10 }, 0.6);
  assert.equal(cost.measuredIterations, 3);
  assert.ok(Math.abs(cost.measuredSec - 0.3) < 1e-9);
  assert.ok(Math.abs(cost.measuredShare - 0.5) < 1e-9);
  assert.equal(cost.scheduleReason, undefined);
});
