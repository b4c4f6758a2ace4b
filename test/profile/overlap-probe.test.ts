import { test } from 'node:test';
import assert from 'node:assert/strict';
import { probeShare, proveProbe, residentSubset } from '../../src/profile/overlap-probe.js';
import type { StateProof } from '../../src/schema/profile.js';

test('the probe holds the share that balances fetch and prep, within 10%-90%; none without a fetch stall', () => {
  // The PyTorch example: 3.0 ms of reading and 1.5 ms of decoding per sample: hold half.
  assert.ok(Math.abs(probeShare(3.0e-3, 1.5e-3)! - 0.5) < 1e-12);
  assert.equal(probeShare(100e-3, 1e-3), 0.9);
  assert.equal(probeShare(1.1e-3, 1e-3), 0.1);
  assert.equal(probeShare(1e-3, 2e-3), null, 'reads faster than prep: nothing to take apart');
  assert.equal(probeShare(1e-3, 0), null);
});

test('the resident subset is a seeded random choice holding about the share of the bytes', () => {
  const files = Array.from({ length: 1000 }, (_, k) => ({ path: `/d/${k}.jpg`, bytes: 1000 + (k % 7) * 500 }));
  const total = files.reduce((s, f) => s + f.bytes, 0);
  const half = residentSubset(files, 0.5);
  const bytes = half.reduce((s, f) => s + f.bytes, 0);
  assert.ok(Math.abs(bytes - 0.5 * total) <= 2000, `${bytes} of ${total}: the share, within half the largest file`);
  assert.deepEqual(
    residentSubset(files, 0.5).map((f) => f.path),
    half.map((f) => f.path),
    'the same seed, the same files',
  );
  assert.notDeepEqual(
    half.slice(0, 10).map((f) => f.path),
    files.slice(0, 10).map((f) => f.path),
    'not simply the first files',
  );
  const shards = Array.from({ length: 8 }, (_, k) => ({ path: `/s/${k}.tar`, bytes: 1e9 }));
  assert.equal(residentSubset(shards, 0.1).length, 1, 'a tenth of 8 shards: one, not none');
  assert.equal(residentSubset(shards, 0.3).length, 2, '2.4 shards: 2');
});

test('the probe is proven when the planned share was resident and about the rest was read', () => {
  const state = (resident: number, readFraction: number | null): StateProof => ({
    proven: false,
    reason: 'only 52.0% of consumed bytes read from storage: part of the data came from a cache',
    residentBytesBefore: resident * 1e8,
    datasetBytes: 1e8,
    readBytes: readFraction === null ? null : readFraction * 5e8,
    consumedBytes: 5e8,
    readFraction,
    readBytesSource: 'test',
  });
  const ok = proveProbe(state(0.49, 0.52), 0.5);
  assert.equal(ok.proven, true);
  assert.match(
    ok.reason,
    /49\.0% resident before the run \(planned 50\.0%\); 52\.0% of consumed bytes read from storage/,
  );
  assert.match(
    proveProbe(state(0.3, 0.52), 0.5).reason,
    /30\.0% of the dataset was resident before the run, not the 50\.0% planned/,
  );
  assert.equal(proveProbe(state(0.5, 0.9), 0.5).proven, false, 'the held part was evicted: reads of nearly everything');
  assert.equal(proveProbe(state(0.5, null), 0.5).proven, false);
});
