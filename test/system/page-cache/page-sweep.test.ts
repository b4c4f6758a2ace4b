/**
 * The page-by-page logic of the cold keeper's sweep and of residency, on a
 * fake libc (an in-memory page cache): which pages are evicted, which are
 * spared for one interval, and how the tail page counts.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { FakeLibc } from '../../support/fake-libc.js';
import { FADV } from '../../../src/system/kernel/libc.js';
import { adviseDontNeed, residentBytesOfFd } from '../../../src/system/page-cache/page-cache.js';
import { sweepFilePages } from '../../../src/system/page-cache/page-sweep.js';

const PAGE = 4096;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsa-page-sweep-'));
const open: number[] = [];
after(() => {
  for (const fd of open) fs.closeSync(fd);
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A real file of `bytes` (fstat must see its size), open for reading. */
function fileOf(name: string, bytes: number): { fd: number; file: string } {
  const file = path.join(dir, name);
  fs.writeFileSync(file, Buffer.alloc(bytes, 1));
  const fd = fs.openSync(file, 'r');
  open.push(fd);
  return { fd, file };
}

test('a sweep evicts the pages resident now and at the previous sweep, and spares the ones that just arrived', () => {
  const libc = new FakeLibc(PAGE);
  const { fd, file } = fileOf('ten-pages.bin', 10 * PAGE);
  libc.setResident(file, [0, 1, 2, 5]);
  const first = sweepFilePages(libc, fd, file, undefined);
  assert.equal(first.evictedBytes, 0, 'nothing was resident at a previous sweep');
  assert.deepEqual(libc.residentPages(file), [0, 1, 2, 5]);

  // The job read page 6 since; pages 0-2 and 5 are still there.
  libc.setResident(file, [0, 1, 2, 5, 6]);
  const second = sweepFilePages(libc, fd, file, first.arrived);
  assert.equal(second.evictedBytes, 4 * PAGE);
  assert.equal(second.blind, false);
  assert.deepEqual(libc.residentPages(file), [6], 'the page that just arrived stays for one interval');
  assert.deepEqual(
    libc.advice.map((a) => [a.offsetBytes / PAGE, a.lengthBytes / PAGE]),
    [
      [0, 3],
      [5, 1],
    ],
    'one DONTNEED per run of old pages',
  );

  const third = sweepFilePages(libc, fd, file, second.arrived);
  assert.equal(third.evictedBytes, PAGE);
  assert.deepEqual(libc.residentPages(file), []);
  assert.equal(third.arrived, undefined);
});

test('the tail page counts only the bytes of the file it holds', () => {
  const libc = new FakeLibc(PAGE);
  const bytes = 2 * PAGE + PAGE / 2;
  const { fd, file } = fileOf('two-and-a-half-pages.bin', bytes);
  libc.setResident(file, [0, 2]);
  assert.equal(residentBytesOfFd(libc, fd, bytes), PAGE + PAGE / 2);
  const first = sweepFilePages(libc, fd, file, undefined);
  assert.equal(sweepFilePages(libc, fd, file, first.arrived).evictedBytes, PAGE + PAGE / 2);
});

test('residency reads a file larger than one mincore window in windows', () => {
  const libc = new FakeLibc(PAGE);
  // 64 Ki pages a window: a page on each side of the first boundary (a sparse file: no bytes written).
  const pages = 64 * 1024 + 2;
  const bytes = pages * PAGE;
  const file = path.join(dir, 'sparse.bin');
  fs.writeFileSync(file, '');
  fs.truncateSync(file, bytes);
  const fd = fs.openSync(file, 'r');
  open.push(fd);
  libc.setResident(file, [0, 64 * 1024 - 1, 64 * 1024, pages - 1]);
  assert.equal(residentBytesOfFd(libc, fd, bytes), 4 * PAGE);
});

test('a failed call is a Node-style error with the errno name as its code', () => {
  const libc = new FakeLibc(PAGE);
  const { fd, file } = fileOf('failing.bin', PAGE);
  libc.setResident(file, [0]);
  libc.failMincore = 12;
  assert.throws(() => sweepFilePages(libc, fd, file, undefined), { code: 'ENOMEM', message: 'mincore: ENOMEM' });
  assert.equal(residentBytesOfFd(libc, fd, PAGE), -12);
  assert.throws(() => adviseDontNeed(libc, 12345, 0, 0), { code: 'EBADF' });
  assert.deepEqual(libc.advice.at(-1), { fd: 12345, offsetBytes: 0, lengthBytes: 0, advice: FADV.dontNeed });
});
