/**
 * residency, evict and warm on a page cache the test sets (FakeLibc and
 * FakeFileSyscalls over real files): what each counts and does, whatever the
 * kernel's own cache holds, through cachestat, through the mincore
 * fallback and through Node's fs where the file syscalls are not bound, for
 * a plain list of paths and for a dataset's file table.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { listDataset } from '../../../src/system/dataset/dataset.js';
import { FakeFileSyscalls } from '../../support/fake-file-syscalls.js';
import { FakeLibc } from '../../support/fake-libc.js';
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

/**
 * The per-file strategies an operation walks with: the bound calls, with
 * cachestat or falling back to mincore, and Node's fs where none are bound.
 */
type Strategy = 'cachestat' | 'mincore' | 'node fs';
const STRATEGIES: readonly Strategy[] = ['cachestat', 'mincore', 'node fs'];

function fakes(strategy: Strategy = 'cachestat'): {
  libc: FakeLibc;
  calls: FakeFileSyscalls;
  bindings: PageCacheBindings;
} {
  const libc = new FakeLibc(PAGE);
  const calls = new FakeFileSyscalls(libc, { cachestat: strategy === 'cachestat' });
  const load: PageCacheBindings['calls'] =
    strategy === 'node fs' ? { ok: false, reason: 'not bound in this test' } : { ok: true, calls };
  return { libc, calls, bindings: { libc: { ok: true, libc }, calls: load } };
}

for (const strategy of STRATEGIES) {
  describe(`through ${strategy}`, () => {
    test('residency counts resident pages, the tail page by its bytes; empty files are skipped and missing ones unknown', async () => {
      const { dir, whole, tail, empty } = dataset(`residency-${strategy}`);
      const { libc, bindings } = fakes(strategy);
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
      // The walked dataset's table, directory by directory: the same bytes.
      const listed = await listDataset([dir], { readMeminfo: async () => 'MemAvailable: 100000000 kB\n' });
      const walked = await residency(listed.files, bindings);
      assert.deepEqual(
        [walked.residentBytes, walked.totalBytes, walked.checkedFiles, walked.unknownFiles],
        [4.5 * PAGE, 5.5 * PAGE, 2, 0],
      );
    });

    test('evict advises out only the files with cached pages, after one sync, and counts what is left', async () => {
      const { dir, whole, tail, empty } = dataset(`evict-${strategy}`);
      const { libc, calls, bindings } = fakes(strategy);
      libc.setResident(whole, [1, 2]);
      const missing = path.join(dir, 'no-such-file.bin');
      const result = await evict([{ path: whole }, { path: tail }, { path: empty }], { sync: true }, bindings);
      // Node's fs has no syncfs: sync(2) instead, once.
      assert.deepEqual([calls.syncs, libc.syncs], strategy === 'node fs' ? [0, 1] : [1, 0]);
      assert.equal(result.files, 1);
      assert.equal(result.bytes, 3 * PAGE);
      assert.equal(result.nonResidentFiles, 2, 'the uncached and the empty file');
      assert.equal(result.residentBytesAfter, 0);
      assert.equal(result.failedFiles, 0);
      assert.deepEqual(libc.residentPages(whole), []);
      assert.deepEqual(
        libc.advice.map((a) => a.advice),
        [FADV.dontNeed],
        'no advice for the files with nothing cached',
      );

      const { calls: unsynced, libc: unsyncedLibc, bindings: noSync } = fakes(strategy);
      const failed = await evict([{ path: whole }, { path: missing }], { sync: false }, noSync);
      assert.deepEqual([unsynced.syncs, unsyncedLibc.syncs], [0, 0]);
      assert.equal(failed.failedFiles, 1);
      assert.match(failed.firstError!, /no-such-file\.bin: ENOENT/);
      assert.equal(failed.residentBytesAfter, undefined, 'unknown once a file could not be read');
    });
  });
}

test("warm leaves resident files alone and reads small ones ahead on advice, through a dataset's file table", async () => {
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
  assert.equal(
    calls.firstByteReads,
    3,
    'every file left resident had its first byte read (its access-time update done now)',
  );
  const after = await residency(listed.files, bindings);
  assert.equal(after.residentBytes, after.totalBytes);
  assert.deepEqual(
    result.residency,
    after,
    'the warm saw each file as it left it: the residency pass after says the same',
  );
  // The warm keeper's looks skip those reads: the first warm did them.
  await warm(listed.files, { concurrency: 2, touchAccessTimes: false }, bindings);
  assert.equal(calls.firstByteReads, 3);
});
