import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ExitCode, UserError } from '../../../src/errors.js';
import { loadLibc } from '../../../src/system/kernel/libc.js';
import { loadFileSyscalls } from '../../../src/system/kernel/file-syscalls.js';
import { listDataset } from '../../../src/system/dataset/dataset.js';
import { mountOf, parseMountinfo } from '../../../src/system/kernel/mountinfo.js';
import {
  dropCachesGlobally,
  evict,
  pageCacheSupport,
  residency,
  warm,
} from '../../../src/system/page-cache/page-cache.js';

const MiB = 1024 * 1024;
const support = pageCacheSupport();
const skip = !support.residency || !support.evict ? `page-cache control unavailable: ${support.reason}` : false;

/** Writes `sizes` files of incompressible data into `dir`; returns their refs. */
function writeFiles(dir: string, sizes: number[]): { path: string; bytes: number }[] {
  const block = randomBytes(MiB);
  return sizes.map((bytes, index) => {
    const file = path.join(dir, `f${index}.bin`);
    const fd = fs.openSync(file, 'w');
    for (let written = 0; written < bytes; written += MiB) {
      fs.writeSync(fd, block, 0, Math.min(MiB, bytes - written));
    }
    fs.closeSync(fd);
    return { path: file, bytes };
  });
}

describe('page cache', { skip }, () => {
  let dir: string;
  let files: { path: string; bytes: number }[];
  const total = (): number => files.reduce((sum, file) => sum + file.bytes, 0);

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsa-page-cache-'));
    // Sizes that are not page multiples exercise the tail-page rounding.
    files = writeFiles(dir, [16 * MiB, 8 * MiB + 123, 4 * MiB + 4095, 1]);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('warm makes the files resident and evict drops them', async () => {
    await evict(files, { sync: true });
    const warmed = await warm(files, { concurrency: 3 });
    assert.equal(warmed.files, files.length);
    assert.equal(warmed.bytesRead, total());
    assert.equal(warmed.failedFiles, 0);
    assert.equal(warmed.residentFiles, 0);
    // The 1-byte file is read ahead on advice; the others are read.
    assert.equal(warmed.advisedFiles, 1);
    const again = await warm(files, { concurrency: 3 });
    assert.deepEqual(
      [again.files, again.bytesRead, again.residentFiles],
      [0, 0, files.length],
      'a resident file is not read again',
    );

    const hot = await residency(files);
    assert.equal(hot.totalBytes, total());
    assert.equal(hot.checkedFiles, files.length);
    assert.equal(hot.unknownFiles, 0);
    assert.ok(hot.fraction > 0.99, `fraction after warm: ${hot.fraction}`);
    assert.ok(hot.residentBytes <= hot.totalBytes);
    // What the warms saw of each file as they left it: what the pass after says, read from storage or found resident.
    for (const seen of [warmed.residency!, again.residency!]) {
      assert.deepEqual([seen.totalBytes, seen.checkedFiles, seen.unknownFiles], [hot.totalBytes, hot.checkedFiles, 0]);
      assert.equal(seen.residentBytes, hot.residentBytes);
    }

    // Just written, so dirty: sync is what lets DONTNEED drop them.
    const evicted = await evict(files, { sync: true });
    assert.equal(evicted.files, files.length);
    assert.equal(evicted.bytes, total());
    assert.equal(evicted.failedFiles, 0);

    const cold = await residency(files);
    assert.ok(cold.fraction < 0.01, `fraction after evict: ${cold.fraction}`);

    // Nothing cached any more: a second eviction only checks residency and advises nothing (issue 10, item 3).
    const again2 = await evict(files, { sync: false });
    assert.deepEqual(
      [again2.files, again2.bytes, again2.nonResidentFiles, again2.failedFiles],
      [0, 0, files.length, 0],
    );
    await warm([files[1]], { concurrency: 1 });
    const one = await evict(files, { sync: false });
    assert.deepEqual(
      [one.files, one.bytes, one.nonResidentFiles],
      [1, files[1].bytes, files.length - 1],
      'only the resident file is advised',
    );
    assert.equal(one.residentBytesAfter, 0, 'what is left resident is counted in the same pass');
    assert.equal(again2.residentBytesAfter, 0);
    assert.ok((await residency(files)).fraction < 0.01);
  });

  it('counts a partly read file as partly resident', async () => {
    const [big] = files;
    await evict([big], { sync: true });
    const fd = fs.openSync(big.path, 'r');
    // POSIX_FADV_RANDOM: no read-ahead, so exactly the 4 MiB read become resident.
    const libc = loadLibc();
    if (libc.ok) libc.libc.posixFadvise(fd, 0, 0, 1);
    fs.readSync(fd, Buffer.alloc(4 * MiB), 0, 4 * MiB, 0);
    fs.closeSync(fd);
    const partial = await residency([big]);
    assert.ok(partial.residentBytes >= 4 * MiB, `resident ${partial.residentBytes}`);
    assert.ok(partial.fraction < 0.3, `fraction ${partial.fraction}`);
  });

  it('skips empty files and reports missing ones as unknown', async () => {
    const empty = path.join(dir, 'empty.bin');
    fs.writeFileSync(empty, '');
    const missing = path.join(dir, 'missing.bin');
    const result = await residency([{ path: empty }, { path: missing }]);
    assert.equal(result.totalBytes, 0);
    assert.equal(result.checkedFiles, 0);
    assert.equal(result.fraction, 0);
    assert.equal(result.unknownFiles, 1);
    assert.match(result.unknownReason ?? '', /missing\.bin: ENOENT/);

    const evicted = await evict([{ path: missing }, files[3]], { sync: false });
    assert.equal(evicted.files + evicted.nonResidentFiles, 1);
    assert.equal(evicted.failedFiles, 1);
    assert.match(evicted.firstError ?? '', /missing\.bin: ENOENT/);

    const warmed = await warm([{ path: missing }], { concurrency: 4 });
    assert.equal(warmed.failedFiles, 1);
    assert.equal(warmed.bytesRead, 0);
  });

  it('warm with a small buffer reads every byte', async () => {
    await evict(files, { sync: false });
    const warmed = await warm(files, { concurrency: 1, bufferBytes: 64 * 1024 });
    assert.equal(warmed.bytesRead, total());
  });

  it("warm makes the access-time update of a resident file, so the job's first read has none to write", async (t) => {
    const mount = mountOf(parseMountinfo(fs.readFileSync('/proc/self/mountinfo', 'utf8')), fs.realpathSync(dir));
    const options = mount?.mountOptions ?? [];
    if (options.includes('noatime') || options.includes('ro'))
      return t.skip(`${dir} is mounted ${options.join(',')}: reads never update atime`);
    const file = files[0];
    // Without cachestat residency falls back to mmap, and mapping a file updates its atime too: the test could not
    // fail.
    const calls = loadFileSyscalls();
    const probe = fs.openSync(file.path, 'r');
    const cachestat = calls.ok && calls.calls.cachedPages(probe, 0, 0) >= 0;
    fs.closeSync(probe);
    if (!cachestat)
      return t.skip('no cachestat(2) here (Linux < 6.5): residency maps the file, which updates atime by itself');
    await warm([file]);
    // An access time older than the modification time: relatime's rule updates it at the next read.
    const { mtime } = fs.statSync(file.path);
    fs.utimesSync(file.path, new Date(mtime.getTime() - 3_600_000), mtime);
    const warmed = await warm([file]);
    assert.equal(warmed.residentFiles, 1, 'the file was resident: no bytes to bring in');
    assert.ok(fs.statSync(file.path).atimeMs > mtime.getTime() - 3_600_000, 'its access time was updated by the warm');
  });
});

describe('page cache over a walked dataset (directory by directory)', { skip }, () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsa-page-cache-table-'));
    for (let d = 0; d < 3; d++) {
      fs.mkdirSync(path.join(dir, `class${d}`));
      for (let f = 0; f < 50; f++)
        fs.writeFileSync(path.join(dir, `class${d}`, `${f}.bin`), Buffer.alloc(1024 + d * 5000 + f, 1));
    }
    // A large file goes through the readers, not read-ahead advice.
    fs.writeFileSync(path.join(dir, 'class0', 'big.bin'), Buffer.alloc(3 * MiB + 17, 2));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('evicts, warms and measures the same bytes as the plain list does', async () => {
    const dataset = await listDataset([dir], { readMeminfo: async () => 'MemAvailable: 100000000 kB\n' });
    const plain = dataset.files.map((file) => ({ path: file.path }));
    assert.equal(dataset.files.length, 151);

    const evicted = await evict(dataset.files, { sync: true });
    assert.deepEqual([evicted.files, evicted.bytes, evicted.failedFiles], [151, dataset.bytes, 0]);
    const cold = await residency(dataset.files);
    assert.equal(cold.totalBytes, dataset.bytes);
    assert.ok(cold.fraction < 0.01, `fraction after evict: ${cold.fraction}`);

    const warmed = await warm(dataset.files, { concurrency: 2 });
    assert.deepEqual([warmed.files, warmed.bytesRead, warmed.failedFiles], [151, dataset.bytes, 0]);
    assert.equal(warmed.advisedFiles, 150);
    const hot = await residency(dataset.files);
    const hotPlain = await residency(plain);
    assert.equal(hot.residentBytes, hotPlain.residentBytes);
    assert.equal(hot.totalBytes, hotPlain.totalBytes);
    assert.ok(hot.fraction > 0.99, `fraction after warm: ${hot.fraction}`);
  });
});

describe('dropCachesGlobally', () => {
  // As root it would really drop every cache on a shared machine; only the
  // refusal is tested, where it applies.
  const isRoot = process.geteuid?.() === 0;
  it('is a UserError naming the fix when not permitted', { skip: isRoot ? 'running as root' : false }, async () => {
    await assert.rejects(dropCachesGlobally(), (error: unknown) => {
      assert.ok(error instanceof UserError);
      assert.equal(error.exitCode, ExitCode.Environment);
      assert.match(error.message, /run as root, or omit --drop-caches/);
      assert.doesNotMatch(error.message, /\n/);
      return true;
    });
  });
});
