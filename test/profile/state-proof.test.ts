import { test } from 'node:test';
import assert from 'node:assert/strict';
import { proveState, type ProofInput } from '../../src/profile/state-proof.js';

const base: ProofInput = {
  mode: 'cold',
  residentBytesBefore: 0,
  datasetBytes: 100e6,
  readBytes: 98e6,
  readBytesSource: 'test',
  consumedBytes: 100e6,
  jobAcknowledgedMode: true,
  fitsInMemory: true,
};

test('cold is proven when nothing was resident and consumed bytes came from storage', () => {
  const proof = proveState(base);
  assert.equal(proof.proven, true);
  assert.equal(proof.readFraction, 0.98);
});

test('cold is unproven when the data came from a cache, or was resident before', () => {
  assert.match(proveState({ ...base, readBytes: 50e6 }).reason, /only 50\.0% of consumed bytes/);
  assert.equal(proveState({ ...base, readBytes: 50e6 }).proven, false);
  assert.equal(proveState({ ...base, residentBytesBefore: 20e6 }).proven, false);
});

test('cached needs residency before, few storage reads, and a dataset that fits', () => {
  const cached: ProofInput = { ...base, mode: 'cached', residentBytesBefore: 100e6, readBytes: 1e6 };
  assert.equal(proveState(cached).proven, true);
  assert.equal(proveState({ ...cached, readBytes: 30e6 }).proven, false);
  assert.equal(proveState({ ...cached, residentBytesBefore: 60e6 }).proven, false);
  assert.match(proveState({ ...cached, fitsInMemory: false }).reason, /does not fit in memory/);
});

test('cached answered in the job: proven on the local share, whatever the copy holds of the dataset', () => {
  const answered: ProofInput = {
    ...base,
    mode: 'cached',
    residentBytesBefore: 10e6,
    fitsInMemory: false,
    readBytes: 0.5e6,
    localBytes: 99e6,
  };
  const proof = proveState(answered);
  assert.equal(proof.proven, true, proof.reason);
  assert.match(proof.reason, /99\.0% of consumed bytes answered in the job from the local copy, 0\.5% fetched/);
  const fetched = proveState({ ...answered, readBytes: 2e6 });
  assert.equal(fetched.proven, false, 'more than 1% came over the network');
  assert.match(fetched.reason, /--net-meter proxy/);
  assert.match(proveState({ ...answered, localBytes: 50e6 }).reason, /--job-cache/);
});

test('unmeasurable reads and an unacknowledged mode are never proven', () => {
  assert.equal(proveState({ ...base, readBytes: null }).proven, false);
  assert.equal(proveState({ ...base, readBytes: null }).readFraction, null);
  const silent = proveState({ ...base, mode: 'synthetic', jobAcknowledgedMode: false });
  assert.equal(silent.proven, false);
  assert.match(silent.reason, /never acknowledged synthetic/);
  assert.equal(proveState({ ...base, mode: 'synthetic' }).proven, true);
});

test("the cold keeper's CPU becomes a share of one CPU over the mode's wall time", () => {
  const proof = proveState({
    ...base,
    keeper: { mechanism: 'scan', cpuSec: 3, fallbackReason: 'no watches', modeWallSec: 60 },
  });
  assert.deepEqual(proof.keeper, { mechanism: 'scan', cpuSec: 3, cpuShare: 0.05, fallbackReason: 'no watches' });
  assert.equal(proveState(base).keeper, undefined);
});

test('a subset the job never acknowledged, and a file system that cannot hold the state, overrule the measured verdict', () => {
  const cached: ProofInput = { ...base, mode: 'cached', residentBytesBefore: 100e6, readBytes: 1e6 };
  const offered = { files: 300, reason: 'does-not-fit' as const, jobNote: undefined };
  const kept = proveState({ ...cached, subset: { ...offered, jobSamples: 300 } });
  assert.equal(kept.proven, true);
  assert.match(kept.reason, /^on a resident subset of 300 files \(the job kept 300 samples\): 100\.0% resident/);
  const ignored = proveState({ ...cached, subset: { ...offered, jobSamples: undefined } });
  assert.equal(ignored.proven, false);
  assert.match(ignored.reason, /never said it restricted itself to it/);
  const tmpfs = proveState({
    ...base,
    sourceLimit: 'the dataset is on tmpfs at /dev/shm: its pages cannot be evicted',
  });
  assert.equal(tmpfs.proven, false);
  assert.match(tmpfs.reason, /^the dataset is on tmpfs/);
  assert.equal(tmpfs.readFraction, 0.98, 'the measured figures stay in the proof');
});

test('reads outside --data are named, and a cold mode they could account for is not proven', () => {
  const note = 'the job also read files outside --data: /other (10 files)';
  const small = proveState({ ...base, otherReads: { bytes: 2e6, note } });
  assert.equal(
    small.proven,
    true,
    "96% of the consumed bytes are the dataset's even if every outside byte came from storage",
  );
  assert.ok(small.reason.endsWith(`; ${note}`));
  const large = proveState({ ...base, otherReads: { bytes: 40e6, note } });
  assert.equal(large.proven, false);
  assert.match(
    large.reason,
    /98\.0% of consumed bytes read from storage, but as little as 58\.0% may be the dataset's; the job also read/,
  );
  const cached = proveState({
    ...base,
    mode: 'cached',
    residentBytesBefore: 100e6,
    readBytes: 1e6,
    otherReads: { bytes: 40e6, note },
  });
  assert.equal(cached.proven, true, "outside reads can only add to a cached mode's storage reads");
  assert.ok(cached.reason.endsWith(`; ${note}`));
});
