/**
 * residency, evict and warm on a page cache the test sets (FakeLibc and
 * FakeFileSyscalls over real files): what each counts and does, whatever the
 * kernel's own cache holds, through cachestat and through the mincore
 * fallback, for a plain list of paths and for a dataset's file table.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { listDataset } from '../../../src/system/dataset/dataset.js';
import { FakeFileSyscalls } from '../../../src/system/kernel/fake-file-syscalls.js';
import { FakeLibc } from '../../../src/system/kernel/fake-libc.js';
import { FADV } from '../../../src/system/kernel/libc.js';
import { evict, residency, warm, type PageCacheBindings } from '../../../src/system/page-cache/page-cache.js';

const PAGE = 4096;
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dsa-page-cache-logic-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

/** A folder with a 3-page file, a 2.5-page file and an empty one. */
function dataset(name: string): { dir: string; whole: string; tail: string; empty: string } {
  const dir = path.join(root, name);
  fs.mkdirSync(dir);
  const write = (file: string, bytes: number): string => {
    fs.writeFileSync(path.join(dir, file), Buffer.alloc(bytes, 7));
    return path.join(dir, file);
  };
  return { dir, whole: write('a.bin', 3 * PAGE), tail: write('b.bin', 2.5 * PAGE), empty: write('c.bin', 0) };
}

function fakes(cachestat = true): { libc: FakeLibc; calls: FakeFileSyscalls; bindings: PageCacheBindings } {
  const libc = new FakeLibc(PAGE);
  const calls = new FakeFileSyscalls(libc, { cachestat });
  return { libc, calls, bindings: { libc: { ok: true, libc }, calls: { ok: true, calls } } };
}

for (const cachestat of [true, false]) {
  describe(`residency through ${cachestat ? 'cachestat' : 'mincore'}`, () => {
    test('counts resident pages, the tail page by its bytes; empty files are skipped and missing ones unknown', async () => {
      const { whole, tail, empty } = dataset(`residency-${cachestat}`);
      const { libc, bindings } = fakes(cachestat);
      libc.setResident(whole, [0, 1, 2]);
      libc.setResident(tail, [0, 2]);
      const missing = path.join(root, 'no-such-file.bin');
      const result = await residency([{ path: whole }, { path: tail }, { path: empty }, { path: missing }], bindings);
      assert.equal(result.residentBytes, 3 * PAGE + 1.5 * PAGE);
      assert.equal(result.totalBytes, 5.5 * PAGE);
      assert.equal(result.checkedFiles, 2);
      assert.equal(result.unknownFiles, 1);
      assert.match(result.unknownReason!, /no-such-file\.bin: ENOENT/);
      assert.equal(result.fraction, 4.5 / 5.5);
    });
  });
}

test("evict advises out only the files with cached pages, after one syncfs of their file system, and counts what is left", async () => {
  const { whole, tail } = dataset('evict');
  const { libc, calls, bindings } = fakes();
  libc.setResident(whole, [1, 2]);
  const result = await evict([{ path: whole }, { path: tail }], { sync: true }, bindings);
  assert.equal(calls.syncs, 1);
  assert.equal(result.files, 1);
  assert.equal(result.bytes, 3 * PAGE);
  assert.equal(result.nonResidentFiles, 1);
  assert.equal(result.residentBytesAfter, 0);
  assert.equal(result.failedFiles, 0);
  assert.deepEqual(libc.residentPages(whole), []);
  assert.deepEqual(libc.advice.map((a) => a.advice), [FADV.dontNeed], 'no advice for the file with nothing cached');

  const { calls: unsynced, bindings: noSync } = fakes();
  await evict([{ path: whole }], { sync: false }, noSync);
  assert.equal(unsynced.syncs, 0);
});

test('warm leaves resident files alone and reads small ones ahead on advice, through a dataset\'s file table', async () => {
  const { dir, whole, tail } = dataset('warm');
  const { libc, calls, bindings } = fakes();
  libc.setResident(whole, [0, 1, 2]);
  const listed = await listDataset([dir], { readMeminfo: async () => 'MemAvailable: 100000000 kB\n' });
  const result = await warm(listed.files, { concurrency: 2 }, bindings);
  assert.equal(result.residentFiles, 2, 'a.bin was resident, and the empty c.bin has nothing to bring in');
  assert.equal(result.advisedFiles, 1, 'b.bin was read ahead on WILLNEED');
  assert.equal(result.files, 1);
  assert.equal(result.bytesRead, 2.5 * PAGE);
  assert.equal(result.failedFiles, 0);
  assert.deepEqual(libc.residentPages(tail), [0, 1, 2]);
  assert.equal(calls.firstByteReads, 3, 'every file left resident had its first byte read (its access-time update done now)');
  const after = await residency(listed.files, bindings);
  assert.equal(after.residentBytes, after.totalBytes);
  // The warm keeper's looks skip those reads: the first warm did them.
  await warm(listed.files, { concurrency: 2, touchAccessTimes: false }, bindings);
  assert.equal(calls.firstByteReads, 3);
});
