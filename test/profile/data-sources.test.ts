/**
 * The data sources beside their interface: the local-file source's own
 * answers (its throttle refuses a dataset with no block device, its meter
 * reads the job tree's read_bytes from the resource samples and this
 * process's /proc/self/io, its proofs are limited by the file system), and
 * the proof's words for a source that fetches over the network.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ExitCode, UserError } from '../../src/errors.js';
import { LocalFilesSource } from '../../src/profile/data-sources/local-files.js';
import { proveState, type ProofInput } from '../../src/profile/state-proof.js';
import type { ResourceSample } from '../../src/schema/profile.js';
import type { Dataset } from '../../src/system/dataset/dataset.js';
import { fetchedSeriesOf } from '../../src/profile/window-rates.js';

const dataset = (overrides: Partial<Dataset> = {}): Dataset => ({
  roots: ['/data'],
  files: [{ path: '/data/a', bytes: 1000 }],
  bytes: 1000,
  meanFileBytes: 1000,
  fileBytesQuantiles: { p10: 1000, p50: 1000, p90: 1000, max: 1000 },
  device: null,
  fitsInMemory: true,
  memoryBudgetBytes: 2 ** 30,
  skippedEntries: 0,
  ...overrides,
});

const sample = (t: number, jobReadBytes: number): ResourceSample => ({ t, cpuPct: 0, jobCpuSec: 0, jobProcesses: 1, jobReadBytes, diskReadBytesPerSec: 0, pageCacheBytes: 0 });

test('the local source refuses to throttle a dataset on no block device, naming the flag and the fix', async () => {
  const source = new LocalFilesSource(['/data'], { dropCaches: false });
  await assert.rejects(source.throttle(dataset(), 1e6, 'test', {}), (error: unknown) => {
    assert.ok(error instanceof UserError);
    assert.equal(error.exitCode, ExitCode.Environment);
    assert.match(error.message, /^--storage-bw: the dataset is not on a block device that can be throttled .*omit --storage-bw$/);
    return true;
  });
});

test("the local source's meter is the job tree's read_bytes at each sample, and this process's read_bytes over the whole run", async () => {
  const source = new LocalFilesSource(['/data'], { dropCaches: false });
  const meter = source.startMeter('synthetic', dataset(), []);
  const readings = await meter.finish([sample(1000, 0), sample(2000, 5000)]);
  assert.deepEqual(readings.series, [{ t: 1000, bytes: 0 }, { t: 2000, bytes: 5000 }]);
  assert.deepEqual(fetchedSeriesOf([sample(3000, 7)]), [{ t: 3000, bytes: 7 }]);
  assert.deepEqual(fetchedSeriesOf([{ ...sample(3000, 7), fetchedBytes: 9 }]), [{ t: 3000, bytes: 9 }], "a source's own counter wins over read_bytes");
  assert.match(readings.seriesSource, /^read_bytes of the job tree over the measured window/);
  // /proc/self/io exists on Linux: the figure is a count, not null, and says where it came from.
  assert.equal(typeof readings.wholeRunBytes, 'number');
  assert.match(readings.wholeRunSource, /\/proc\/self\/io after reaping/);
  assert.equal(readings.otherReads(0), null, 'no job ran, so nothing was read outside --data');
});

test('the local source names what limits a proof: a dataset that does not fit, a memory file system', () => {
  const source = new LocalFilesSource(['/data'], { dropCaches: false });
  const tmpfs = dataset({ fileSystems: [{ root: '/data', mountPoint: '/dev/shm', type: 'tmpfs', source: 'tmpfs', kind: 'memory' }] });
  assert.match(source.proofLimit('cold', tmpfs)!, /tmpfs at \/dev\/shm: its pages cannot be evicted/);
  assert.equal(source.proofLimit('cached', tmpfs), null);
  assert.equal(source.proofLimit('cold', dataset()), null);
  const big = dataset({ fitsInMemory: false, bytes: 3 * 2 ** 30, memoryBudgetBytes: 2 ** 30 });
  assert.match(source.warnings(big, ['cached', 'cold']).join('\n'), /does not fit in the memory budget of 1\.00 GiB/);
  assert.deepEqual(source.warnings(big, ['cold']), [], 'no cached mode, nothing to warn of');
  assert.equal(source.warnings(tmpfs, ['cold']).length, 1);
});

test('a proof on a source that fetches over the network says so', () => {
  const cold: ProofInput = { mode: 'cold', residentBytesBefore: 0, datasetBytes: 100, readBytes: 95, readBytesSource: 'proxy', consumedBytes: 100, jobAcknowledgedMode: true, fitsInMemory: true };
  assert.match(proveState(cold).reason, /95\.0% of consumed bytes read from storage$/);
  const remote = proveState({ ...cold, fetchesFrom: 'network' });
  assert.equal(remote.proven, true);
  assert.match(remote.reason, /95\.0% of consumed bytes fetched over the network$/);
  assert.match(proveState({ ...cold, fetchesFrom: 'network', readBytes: null }).reason, /^the bytes the job fetched over the network could not be measured \(proxy\)/);
});
