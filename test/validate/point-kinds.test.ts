/** validate's point kinds (src/validate/point-kinds.ts): each kind's words, folder and scenario in one row. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  describePoint,
  pointKind,
  pointScenario,
  POINT_KINDS,
  type ValidationPoint,
} from '../../src/validate/point-kinds.js';
import type { Scenario } from '../../src/whatif/model.js';

const base: Scenario = {
  cacheBytes: 1e6,
  cpus: 8,
  storageBytesPerSec: 1e8,
  gpus: 1,
  gpuSpeedup: 1,
  // Not the page cache: a cache point must set its own policy.
  cachePolicy: 'minio',
  epochs: 3,
  workers: null,
};

test('each kind names its folder and says what it runs', () => {
  const points: [ValidationPoint, string, string][] = [
    [{ kind: 'control' }, 'control', 'control (as profiled)'],
    [{ kind: 'cache', cacheBytes: 1024, cpus: 2 }, 'cache-1024-cpus-2', 'page cache 1.0 KiB at 2 CPU(s)'],
    [{ kind: 'cpus', cpus: 2 }, 'cpus-2', '2 CPU(s)'],
    [{ kind: 'workers', workers: 4 }, 'workers-4', 'num_workers 4 per rank'],
    [{ kind: 'bandwidth', bytesPerSec: 2e7 + 0.4 }, 'bandwidth-20000000', 'cold at 20.0 MB/s'],
    [{ kind: 'latency', latencySec: 0.04 }, 'latency-40ms', 'cold at 40 ms to a first byte'],
    [{ kind: 'write', bytesPerSec: 5e7 }, 'write-50000000', 'writes held to 50.0 MB/s'],
  ];
  assert.deepEqual(points.map(([p]) => p.kind).sort(), Object.keys(POINT_KINDS).sort(), 'every kind once');
  for (const [point, folder, words] of points) {
    assert.equal(pointKind(point).folderLabel(point), folder);
    assert.equal(describePoint(point), words);
  }
});

test('a cache point runs epochs at its own cache; a cold point nothing cached; the others the whole dataset', () => {
  assert.equal(pointKind({ kind: 'cache', cacheBytes: 0 }).runs, 'epochs');
  assert.deepEqual(pointScenario(base, { kind: 'cache', cacheBytes: 5 }, 99), {
    ...base,
    cacheBytes: 5,
    cachePolicy: 'page-cache',
    epochs: null,
  });
  assert.deepEqual(pointScenario(base, { kind: 'cache', cacheBytes: 5, cpus: 2 }, 99), {
    ...base,
    cacheBytes: 5,
    cachePolicy: 'page-cache',
    epochs: null,
    cpus: 2,
  });
  assert.deepEqual(pointScenario(base, { kind: 'bandwidth', bytesPerSec: 7 }, 99), {
    ...base,
    cacheBytes: 0,
    epochs: null,
    storageBytesPerSec: 7,
  });
  assert.deepEqual(pointScenario(base, { kind: 'workers', workers: 2 }, 99), {
    ...base,
    cacheBytes: 99,
    epochs: null,
    workers: 2,
  });
  assert.equal(pointKind({ kind: 'control' }).runs, 'until-precise');
});
