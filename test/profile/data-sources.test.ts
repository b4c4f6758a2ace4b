/**
 * The data sources beside their interface: the local-file source's own
 * answers (its throttle refuses a dataset with no block device, its meter
 * reads the job tree's read_bytes from the resource samples and this
 * process's /proc/self/io, its proofs are limited by the file system), and
 * the proof's words for a source that fetches over the network.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { ExitCode, UserError } from '../../src/errors.js';
import { LocalFilesSource } from '../../src/profile/data-sources/local-files.js';
import { proveState, type ProofInput } from '../../src/profile/state-proof.js';
import type { ResourceSample } from '../../src/schema/profile.js';
import type { Dataset } from '../../src/system/dataset/dataset.js';
import { fetchedSeriesOf } from '../../src/profile/window-rates.js';
import { CpuLedger } from '../../src/system/kernel/cpu-ledger.js';
import { pageCacheSupport } from '../../src/system/page-cache/page-cache.js';

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

const sample = (t: number, jobReadBytes: number): ResourceSample => ({
  t,
  cpuPct: 0,
  jobCpuSec: 0,
  jobProcesses: 1,
  jobReadBytes,
  diskReadBytesPerSec: 0,
  pageCacheBytes: 0,
});

test('the local source refuses to throttle a dataset on no block device, naming the flag and the fix', async () => {
  const source = new LocalFilesSource(['/data'], { dropCaches: false });
  await assert.rejects(source.throttle.start(dataset(), 1e6, 'test', {}), (error: unknown) => {
    assert.ok(error instanceof UserError);
    assert.equal(error.exitCode, ExitCode.Environment);
    assert.match(
      error.message,
      /^--storage-bw: the dataset is not on a block device that can be throttled .*omit --storage-bw$/,
    );
    return true;
  });
});

test("the local source's meter is the job tree's read_bytes at each sample, and this process's read_bytes over the whole run", async () => {
  const source = new LocalFilesSource(['/data'], { dropCaches: false });
  const meter = source.startMeter('synthetic', dataset(), []);
  const readings = await meter.finish([sample(1000, 0), sample(2000, 5000)]);
  assert.deepEqual(readings.series, [
    { t: 1000, bytes: 0 },
    { t: 2000, bytes: 5000 },
  ]);
  assert.deepEqual(fetchedSeriesOf([sample(3000, 7)]), [{ t: 3000, bytes: 7 }]);
  assert.deepEqual(
    fetchedSeriesOf([{ ...sample(3000, 7), fetchedBytes: 9 }]),
    [{ t: 3000, bytes: 9 }],
    "a source's own counter wins over read_bytes",
  );
  assert.match(readings.seriesSource, /^read_bytes of the job tree over the measured window/);
  // /proc/self/io exists on Linux: the figure is a count, not null, and says where it came from.
  assert.equal(typeof readings.wholeRunBytes, 'number');
  assert.match(readings.wholeRunSource, /\/proc\/self\/io after reaping/);
  assert.equal(readings.otherReads(0), null, 'no job ran, so nothing was read outside --data');
});

test("the local source's meter names a file the job's tree holds open outside --data, and charges its samples to the ledger as meter", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'dsa-local-meter-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'data'));
  mkdirSync(join(dir, 'labels'));
  writeFileSync(join(dir, 'labels', 'labels.csv'), 'a,1\n');
  const ledger = new CpuLedger();
  const source = new LocalFilesSource([join(dir, 'data')], { dropCaches: false, ledger });
  const meter = source.startMeter('cold', dataset({ roots: [join(dir, 'data')] }), []);
  // A job whose child holds the label file open (a grandchild of the root: found among the tree's members).
  const script = `require('node:child_process').spawn(process.execPath, ['-e', "require('node:fs').openSync(process.argv[1], 'r'); setTimeout(() => {}, 4000)", ${JSON.stringify(join(dir, 'labels', 'labels.csv'))}], { stdio: 'ignore' }); setTimeout(() => {}, 4000);`;
  const job = spawn(process.execPath, ['-e', script], { stdio: 'ignore', detached: true });
  t.after(() => {
    try {
      process.kill(-job.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  });
  meter.attach(job.pid!);
  await sleep(2400);
  const readings = await meter.finish([]);
  assert.match(readings.otherReads(0)?.note ?? '', /labels \(1 file\)/);
  assert.ok(ledger.reading().meter.calls >= 1, 'the 2 s sample was charged');
});

test("the local source's states charge the ledger: warm-up as warming, eviction as eviction, the cold keeper as keeper", async (t) => {
  const support = pageCacheSupport();
  if (!support.evict || !support.residency)
    return t.skip(`page-cache control is not available here: ${support.reason}`);
  const dir = mkdtempSync(join(tmpdir(), 'dsa-local-ledger-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (let i = 0; i < 20; i++) writeFileSync(join(dir, `${i}.bin`), Buffer.alloc(64 * 1024, i));
  const ledger = new CpuLedger();
  const source = new LocalFilesSource([dir], { dropCaches: false, ledger });
  const listed = await source.list();
  const cached = await source.modeState.prepare('cached', listed);
  await cached.finish();
  const afterCached = ledger.reading();
  assert.ok(afterCached.warming.calls >= 1 && afterCached.eviction.calls === 0, JSON.stringify(afterCached));
  const cold = await source.modeState.prepare('cold', listed);
  const finish = await cold.finish();
  const reading = ledger.reading();
  assert.ok(reading.eviction.calls >= 1 && reading.eviction.cpuSec > 0, JSON.stringify(reading));
  assert.ok(
    Math.abs(reading.keeper.cpuSec - (finish.keeper?.cpuSec ?? 0)) < 1e-12,
    'the keeper charges what it reports',
  );
  await source.close();
});

test('the local source names what limits a proof: a dataset that does not fit, a memory file system', () => {
  const source = new LocalFilesSource(['/data'], { dropCaches: false });
  const tmpfs = dataset({
    fileSystems: [{ root: '/data', mountPoint: '/dev/shm', type: 'tmpfs', source: 'tmpfs', kind: 'memory' }],
  });
  assert.match(source.proofLimit('cold', tmpfs)!, /tmpfs at \/dev\/shm: its pages cannot be evicted/);
  assert.equal(source.proofLimit('cached', tmpfs), null);
  assert.equal(source.proofLimit('cold', dataset()), null);
  const big = dataset({ fitsInMemory: false, bytes: 3 * 2 ** 30, memoryBudgetBytes: 2 ** 30 });
  assert.match(source.warnings(big, ['cached', 'cold']).join('\n'), /does not fit in the memory budget of 1\.00 GiB/);
  assert.deepEqual(source.warnings(big, ['cold']), [], 'no cached mode, nothing to warn of');
  assert.equal(source.warnings(tmpfs, ['cold']).length, 1);
});

test('a proof on a source that fetches over the network says so', () => {
  const cold: ProofInput = {
    mode: 'cold',
    residentBytesBefore: 0,
    datasetBytes: 100,
    readBytes: 95,
    readBytesSource: 'proxy',
    consumedBytes: 100,
    jobAcknowledgedMode: true,
    fitsInMemory: true,
  };
  assert.match(proveState(cold).reason, /95\.0% of consumed bytes read from storage$/);
  const remote = proveState({ ...cold, fetchesFrom: 'network' });
  assert.equal(remote.proven, true);
  assert.match(remote.reason, /95\.0% of consumed bytes fetched over the network$/);
  assert.match(
    proveState({ ...cold, fetchesFrom: 'network', readBytes: null }).reason,
    /^the bytes the job fetched over the network could not be measured \(proxy\)/,
  );
});
