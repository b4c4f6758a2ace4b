import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatasetCacheCap, headroomBytes, type GroupMemory, type MemoryGroup } from '../../src/validate/memory-limit.js';

const MiB = 2 ** 20;

/** A memory group whose readings the test sets, recording every limit written. */
function fakeGroup(initial: GroupMemory): MemoryGroup & { state: GroupMemory; limits: number[]; refuse: boolean } {
  const group = {
    state: { ...initial },
    limits: [] as number[],
    refuse: false,
    read: () => ({ ...group.state }),
    setLimit(bytes: number) {
      if (group.refuse) throw Object.assign(new Error('EBUSY'), { code: 'EBUSY' });
      group.limits.push(bytes);
      group.state.limitBytes = bytes;
    },
  };
  return group;
}

test('the first step sets own memory + target + headroom', () => {
  const group = fakeGroup({ usageBytes: 300 * MiB, cacheBytes: 100 * MiB, pinnedCacheBytes: 0, limitBytes: 2 ** 50, underOom: false });
  const cap = new DatasetCacheCap(group, [], 40 * MiB);
  cap.step(0);
  assert.deepEqual(group.limits, [Math.round(200 * MiB + 40 * MiB + headroomBytes(200 * MiB))]);
});

test('below target the limit rises only while it binds; above target it falls by the excess', () => {
  const group = fakeGroup({ usageBytes: 250 * MiB, cacheBytes: 50 * MiB, pinnedCacheBytes: 0, limitBytes: 2 ** 50, underOom: false });
  const cap = new DatasetCacheCap(group, [], 40 * MiB);
  cap.step(0);
  const first = group.state.limitBytes;
  // First epoch: the cache is filling and usage is far from the limit: hold.
  cap.step(10 * MiB);
  assert.equal(group.state.limitBytes, first);
  // Usage at the limit (the cache filled it) with 10 MiB of the dataset short of the target: raise by 10 MiB.
  group.state.usageBytes = first;
  group.state.cacheBytes = first - 200 * MiB;
  cap.step(30 * MiB);
  assert.equal(group.state.limitBytes, first + 10 * MiB);
  // The whole dataset kept (56 MiB for a 40 MiB target): lower by the excess, bound or not.
  group.state.usageBytes = first - 50 * MiB;
  group.state.cacheBytes = first - 250 * MiB;
  cap.step(56 * MiB);
  assert.equal(group.state.limitBytes, first + 10 * MiB - 16 * MiB);
});

test('the limit never goes below the job\'s own memory + 8 MiB + its largest recent growth between steps; a refused write is retried', () => {
  const group = fakeGroup({ usageBytes: 220 * MiB, cacheBytes: 20 * MiB, pinnedCacheBytes: 0, limitBytes: 2 ** 50, underOom: false });
  const cap = new DatasetCacheCap(group, [], 10 * MiB);
  cap.step(0);
  cap.step(500 * MiB);
  assert.equal(group.state.limitBytes, 200 * MiB + 8 * MiB);
  group.refuse = true;
  group.state.usageBytes = 400 * MiB; // the job's own memory grew to 380 MiB
  cap.step(0);
  assert.equal(group.state.limitBytes, 200 * MiB + 8 * MiB, 'refused: unchanged');
  group.refuse = false;
  cap.step(0);
  assert.equal(group.state.limitBytes, 380 * MiB + 8 * MiB + 180 * MiB, 'grew by 180 MiB in one step');
});

test('readings are kept with their iteration counts; the steady window starts where asked', async () => {
  const group = fakeGroup({ usageBytes: 100 * MiB, cacheBytes: 0, pinnedCacheBytes: 0, limitBytes: 2 ** 50, underOom: false });
  const cap = new DatasetCacheCap(group, [], 10 * MiB);
  await cap.adjust(3); // no files: 0 bytes resident, a real mincore pass over nothing
  assert.deepEqual(cap.samples, [{ iterations: 3, residentBytes: 0 }]);
  cap.samples.push({ iterations: 40, residentBytes: 9 * MiB }, { iterations: 80, residentBytes: 11 * MiB });
  assert.deepEqual(cap.residencyFrom(40), [9 * MiB, 11 * MiB]);
});

test('mapped files and shared memory count as the job\'s own: the limit never squeezes them', () => {
  // 45 MiB of the cache is the job's mapped executable: lowering the limit into it OOM-killed a Node.js job here.
  const group = fakeGroup({ usageBytes: 200 * MiB, cacheBytes: 100 * MiB, pinnedCacheBytes: 45 * MiB, limitBytes: 2 ** 50, underOom: false });
  const cap = new DatasetCacheCap(group, [], 10 * MiB);
  cap.step(0);
  cap.step(500 * MiB);
  assert.equal(group.state.limitBytes, 145 * MiB + 8 * MiB);
});

test('a growth of the job\'s memory widens the floor for the next 8 steps (2 s), then no longer', () => {
  const group = fakeGroup({ usageBytes: 100 * MiB, cacheBytes: 0, pinnedCacheBytes: 0, limitBytes: 2 ** 50, underOom: false });
  const cap = new DatasetCacheCap(group, [], 10 * MiB);
  cap.step(0);
  group.state.usageBytes = 130 * MiB; // start-up: +30 MiB in one step
  cap.step(500 * MiB);
  assert.equal(group.state.limitBytes, 130 * MiB + 8 * MiB + 30 * MiB);
  for (let k = 0; k < 8; k++) cap.step(500 * MiB);
  assert.equal(group.state.limitBytes, 130 * MiB + 8 * MiB, 'settled: the start-up growth is forgotten');
});

test('the floor follows the job\'s memory down: room its heap freed goes back to the target, not to the dataset', () => {
  // A kernel in miniature: a 64 MiB dataset read over and over, the cache filling whatever the limit leaves.
  const datasetBytes = 64 * MiB;
  const group = fakeGroup({ usageBytes: 200 * MiB, cacheBytes: 0, pinnedCacheBytes: 0, limitBytes: 2 ** 50, underOom: false });
  const cap = new DatasetCacheCap(group, [], 32 * MiB);
  const settle = (ownBytes: number, steps: number): number => {
    let resident = 0;
    for (let k = 0; k < steps; k++) {
      resident = Math.max(0, Math.min(datasetBytes, group.state.limitBytes - ownBytes));
      group.state.cacheBytes = resident;
      group.state.usageBytes = ownBytes + resident;
      cap.step(resident);
    }
    return Math.max(0, Math.min(datasetBytes, group.state.limitBytes - ownBytes));
  };
  assert.equal(settle(200 * MiB, 60), 32 * MiB, 'held at the target');
  // The heap shrinks by 50 MiB (a garbage collection): a floor at the old peak would leave the dataset all 64 MiB.
  assert.equal(settle(150 * MiB, 60), 32 * MiB, 'back at the target after the shrink');
});

test('a job paused at the limit (out of memory, killer disabled) gets room at once', () => {
  const group = fakeGroup({ usageBytes: 120 * MiB, cacheBytes: 20 * MiB, pinnedCacheBytes: 0, limitBytes: 2 ** 50, underOom: false });
  const cap = new DatasetCacheCap(group, [], 10 * MiB);
  cap.step(0);
  cap.step(500 * MiB);
  const low = group.state.limitBytes;
  group.state.underOom = true;
  cap.step(10 * MiB);
  assert.ok(group.state.limitBytes >= low + 16 * MiB, `raised from ${low / MiB} to ${group.state.limitBytes / MiB} MiB`);
});

test('a retried point keeps its extra room: the floor rises by it and the cache cannot squeeze the job below', () => {
  const state = { usageBytes: 250 * MiB, cacheBytes: 50 * MiB, pinnedCacheBytes: 0, limitBytes: 2 ** 50, underOom: false };
  const plain = fakeGroup(state);
  const roomy = fakeGroup(state);
  const a = new DatasetCacheCap(plain, [], 4 * MiB);
  const b = new DatasetCacheCap(roomy, [], 4 * MiB, 48 * MiB);
  for (const cap of [a, b]) {
    cap.step(0);
    cap.step(50 * MiB); // far above a 4 MiB target: the limit falls to the floor
  }
  assert.equal(a.steps[1].floorBytes + 48 * MiB, b.steps[1].floorBytes);
  assert.equal(roomy.state.limitBytes, b.steps[1].floorBytes);
  assert.ok(roomy.state.limitBytes >= 200 * MiB + 48 * MiB);
});
