import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { RemoteCacheState, type RemoteLink } from '../../src/profile/cache-states/remote-cache-state.js';
import { withJobCache } from '../../src/profile/cache-states/job-cache-state.js';
import type { MeteringProxy } from '../../src/system/network/metering-proxy.js';
import type { Dataset, DatasetFile } from '../../src/system/dataset/dataset.js';

/**
 * A link whose proxy and cache are records: what was filled, how the proxy was told to answer, and (where the job's
 * hook answers, `inJob`) the copy's index and the bytes the block was expected to read.
 */
function fakeLink(inJob = false) {
  const stored = new Set<string>();
  const indexes: string[][] = [];
  const expected: (number | null)[] = [];
  const said: { files: number; leftBytes: number; measured: boolean }[] = [];
  const fills: boolean[] = [];
  const uses: { use: string; keys: string[] | null }[] = [] as { use: string; keys: string[] | null }[];
  const proxy = {
    setCacheUse: (use: string, only: ReadonlySet<string> | null = null) =>
      uses.push({ use, keys: only ? [...only].sort() : null }),
  } as unknown as MeteringProxy;
  const link: RemoteLink = {
    proxy,
    keyOf: (f) => `host/${f.path}`,
    fill: async (files, options) => {
      files.forEach((f) => stored.add(f.path));
      fills.push(options?.announced === true);
    },
    storedBytes: (files) => files.filter((f) => stored.has(f.path)).reduce((sum, f) => sum + f.bytes, 0),
    servesInJob: () => inJob,
    writeIndex: (files) => indexes.push(files.map((f) => f.path)),
    announce: (files, _data, leftBytes, rate) => said.push({ files: files.length, leftBytes, measured: rate !== null }),
    copyFiles: (data, bytes) => {
      expected.push(bytes);
      return bytes === null ? data.files : data.files.slice(0, Math.ceil(bytes / 100));
    },
  };
  return { link, stored, uses, indexes, expected, said, fills };
}

const files: DatasetFile[] = [0, 1, 2, 3].map((k) => ({ path: `b/${k}`, bytes: 100 }));
const dataset = (fits: boolean): Dataset => ({
  roots: ['s3://b/'],
  files,
  bytes: 400,
  meanFileBytes: 100,
  fileBytesQuantiles: { p10: 100, p50: 100, p90: 100, max: 100 },
  device: null,
  fitsInMemory: fits,
  memoryBudgetBytes: fits ? 1000 : 200,
  skippedEntries: 0,
});

test('cached: every object fetched into the cache and answered from it; cold and synthetic: every request to the origin', async () => {
  const { link, stored, uses } = fakeLink();
  const state = new RemoteCacheState(() => link);
  const cached = await state.prepare('cached', dataset(true));
  assert.equal(cached.residentBytesBefore, 400);
  assert.equal(stored.size, 4);
  assert.deepEqual(uses.at(-1), { use: 'serve', keys: files.map((f) => `host/${f.path}`) });
  await cached.finish();
  assert.deepEqual(uses.at(-1), { use: 'pass', keys: null });
  for (const mode of ['cold', 'synthetic'] as const) {
    const prepared = await state.prepare(mode, dataset(true));
    assert.equal(prepared.residentBytesBefore, 0);
    assert.equal(uses.at(-1)!.use, 'pass', mode);
  }
});

test('answered in the job: the cached mode fills the copy the link bounds and names it in the index; the proxy is left passing', async () => {
  const { link, stored, uses, indexes, expected, said, fills } = fakeLink(true);
  const state = new RemoteCacheState(() => link);
  const cached = await state.prepare('cached', dataset(false), { expectedBytes: 150 });
  assert.deepEqual(expected, [150]);
  assert.deepEqual([...stored], ['b/0', 'b/1'], 'only the bounded copy is fetched');
  assert.deepEqual(indexes, [['b/0', 'b/1']]);
  assert.deepEqual(
    said,
    [{ files: 2, leftBytes: 100, measured: true }],
    'said once its first object measured the rate',
  );
  assert.deepEqual(
    fills,
    [true, true],
    "that line is the download's announcement: its parts tell no start of their own",
  );
  await state.prepare('cached', dataset(false), { expectedBytes: 150 });
  assert.equal(said.length, 1, 'a copy already there is not said again');
  assert.equal(cached.residentBytesBefore, 200);
  assert.equal(uses.length, 0, 'the proxy is never told to answer');
  const cold = await state.prepare('cold', dataset(false));
  assert.equal(cold.residentBytesBefore, 0);
  assert.deepEqual(uses.at(-1), { use: 'pass', keys: [] });
});

test("the overlap probe's held share is answered locally, the rest from the origin", async () => {
  const { link, uses } = fakeLink();
  const prepared = await new RemoteCacheState(() => link, files.slice(0, 2)).prepare('cold', dataset(true));
  assert.equal(prepared.residentBytesBefore, 200);
  assert.deepEqual(uses.at(-1), { use: 'serve', keys: ['host/b/0', 'host/b/1'] });
});

test('a dataset larger than the room for the cache is not fetched: the cached mode runs remote, for its proof to say so', async () => {
  const { link, stored, uses } = fakeLink();
  const prepared = await new RemoteCacheState(() => link).prepare('cached', dataset(false));
  assert.equal(stored.size, 0);
  assert.equal(prepared.residentBytesBefore, 0);
  assert.equal(uses.at(-1)!.use, 'pass');
});

test("cold: the job's own cache folder is emptied before the run and swept during it, each file once read; cached leaves it as it is", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dsa-job-cache-'));
  try {
    mkdirSync(join(dir, 'shards'));
    writeFileSync(join(dir, 'shards', 'old-0000.tar'), 'x'.repeat(100));
    const { link } = fakeLink();
    // Any source's states can take the job's cache: here the remote source's, as it wraps them with --job-cache.
    const state = withJobCache(new RemoteCacheState(() => link), dir);
    const cached = await state.prepare('cached', dataset(true));
    await cached.finish();
    assert.ok(existsSync(join(dir, 'shards', 'old-0000.tar')), 'the cached mode keeps what the job cached');
    const cold = await state.prepare('cold', dataset(true));
    assert.ok(!existsSync(join(dir, 'shards')), 'emptied before the cold run, its folders too');
    // A download the job has read is swept; one not read yet (still being written, or renamed and not yet opened) is
    // not.
    const past = new Date(Date.now() - 5000);
    writeFileSync(join(dir, 'read.tar'), 'y');
    utimesSync(join(dir, 'read.tar'), past, past);
    readFileSync(join(dir, 'read.tar'));
    writeFileSync(join(dir, 'writing.tar.tmp'), 'z');
    utimesSync(join(dir, 'writing.tar.tmp'), past, past);
    appendFileSync(join(dir, 'writing.tar.tmp'), 'z');
    await sleep(400);
    assert.ok(!existsSync(join(dir, 'read.tar')), 'read since written: swept');
    assert.ok(existsSync(join(dir, 'writing.tar.tmp')), 'written since read: kept');
    const finished = await cold.finish();
    assert.equal(finished.reEvictions, 1, 'one file swept while the run ran');
    assert.ok(existsSync(dir), 'the folder itself stays');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
