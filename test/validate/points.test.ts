import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { ExitCode, UserError } from '../../src/errors.js';
import { readProfile } from '../../src/store/profile-store.js';
import { recommendedCache, requestedPoints } from '../../src/validate/points.js';
import { fitOrFail } from '../whatif/fit-or-fail.js';
import { pointScenario } from '../../src/validate/point-kinds.js';
import { baseScenario } from '../../src/whatif/model.js';

const FIXTURE = fileURLToPath(new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url));

test('the points run in order: the control, the cache sizes as given (shares of the dataset resolved), then the CPU counts', () => {
  const profile = readProfile(FIXTURE);
  const model = fitOrFail(profile);
  const points = requestedPoints(profile, model, {
    cacheSizes: [{ share: 0.5 }, { bytes: 8 << 20 }, { bytes: 0 }],
    cpuCounts: [2, 1],
    workerCounts: [4, 0],
    control: true,
  });
  assert.deepEqual(points, [
    { kind: 'control' },
    { kind: 'cache', cacheBytes: Math.round(profile.dataset.bytes / 2) },
    { kind: 'cache', cacheBytes: 8 << 20 },
    { kind: 'cache', cacheBytes: 0 },
    { kind: 'cpus', cpus: 2 },
    { kind: 'cpus', cpus: 1 },
    { kind: 'workers', workers: 4 },
    { kind: 'workers', workers: 0 },
  ]);
  assert.deepEqual(
    requestedPoints(profile, model, { cacheSizes: [], cpuCounts: [1], workerCounts: [], control: false }),
    [{ kind: 'cpus', cpus: 1 }],
    '--no-control',
  );
});

test("'recommended' is whatif's smallest LRU cache that removes the fetch stall, marked as such", () => {
  const profile = readProfile(FIXTURE);
  const model = fitOrFail(profile);
  const [point] = requestedPoints(profile, model, {
    cacheSizes: [{ word: 'recommended' }],
    cpuCounts: [],
    workerCounts: [],
    control: false,
  });
  assert.equal(point.kind, 'cache');
  assert.equal(point.kind === 'cache' && point.recommended, true);
  const bytes = recommendedCache(model);
  assert.equal(point.kind === 'cache' && point.cacheBytes, bytes);
  // The quick profile is fetch-bound: the cache that removes its stall is most of its dataset, not all of it.
  assert.ok(bytes > 0.5 * profile.dataset.bytes && bytes < profile.dataset.bytes, String(bytes));
});

test("'recommended' on a job without a fetch stall is a bad value that says to pass sizes", () => {
  const model = fitOrFail(readProfile(FIXTURE));
  // Storage as fast as memory: no fetch stall, so no cache to check.
  const noStall = { ...model, storageBytesPerSec: 1e15, fetchPrepSerial: 0 };
  assert.throws(
    () => recommendedCache(noStall),
    (error: unknown) =>
      error instanceof UserError &&
      error.exitCode === ExitCode.BadValue &&
      /no fetch stall to remove.*pass sizes instead/.test(error.message),
  );
});

test('latency points come last and run cold, every request at the asked time to its first byte', () => {
  const profile = readProfile(FIXTURE);
  const model = fitOrFail(profile);
  const points = requestedPoints(profile, model, {
    cacheSizes: [],
    cpuCounts: [],
    workerCounts: [],
    bandwidths: [4e6],
    latencies: [0.06, 0.1],
    control: true,
  });
  assert.deepEqual(points, [
    { kind: 'control' },
    { kind: 'bandwidth', bytesPerSec: 4e6 },
    { kind: 'latency', latencySec: 0.06 },
    { kind: 'latency', latencySec: 0.1 },
  ]);
  const scenario = pointScenario(baseScenario(model), { kind: 'latency', latencySec: 0.06 }, profile.dataset.bytes);
  assert.equal(scenario.cacheBytes, 0);
  assert.equal(scenario.requestLatencySec, 0.06);
});
