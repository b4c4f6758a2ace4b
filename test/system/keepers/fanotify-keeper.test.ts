/**
 * The fanotify keeper against a fake kernel, so that it runs without root:
 * the group's events are queued by the test, each with a real descriptor of a
 * real file (as the kernel opens one per event), and the page cache is
 * FakeLibc's. What must hold: a closed file is evicted through its event's
 * descriptor and that descriptor closed once; a file read and not closed
 * keeps its descriptor until stop; an overflow evicts every file once; an
 * event the keeper cannot read is counted. test/system/keepers/cold-keeper.test.ts
 * runs the same keeper on the real kernel where this process is root.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { startFanotifyKeeper } from '../../../src/system/keepers/fanotify-keeper.js';
import { CpuLedger } from '../../../src/system/kernel/cpu-ledger.js';
import { FakeFanotifyLibc, fanotifyEvent } from '../../support/fake-kernel.js';

const PAGE = 4096;
const MANUAL = { drainMs: 3_600_000, sweepMs: 3_600_000 };

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dsa-fanotify-keeper-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

function dataset(name: string): { files: { path: string; bytes: number }[]; libc: FakeFanotifyLibc } {
  const dir = path.join(root, name);
  fs.mkdirSync(dir);
  const files = ['a.bin', 'b.bin', 'c.bin'].map((file) => {
    fs.writeFileSync(path.join(dir, file), Buffer.alloc(2 * PAGE, 1));
    return { path: path.join(dir, file), bytes: 2 * PAGE };
  });
  const libc = new FakeFanotifyLibc(PAGE);
  for (const file of files) libc.setResident(file.path, [0, 1]);
  return { files, libc };
}

const isOpen = (fd: number): boolean => {
  try {
    fs.fstatSync(fd);
    return true;
  } catch {
    return false;
  }
};

describe('fanotify keeper (fake kernel)', () => {
  it("evicts a closed file through its event's descriptor and closes that descriptor once", async () => {
    const { files, libc } = dataset('close');
    const started = startFanotifyKeeper(libc, files, MANUAL);
    assert.ok(started.ok);
    assert.deepEqual(libc.marked, [path.join(root, 'close')]);
    const fd = fs.openSync(files[0].path, 'r');
    libc.queue.push(fanotifyEvent(0x1 | 0x10, fd)); // a read and its close, merged
    await started.keeper.scanNow();
    assert.deepEqual(libc.residentPages(files[0].path), []);
    assert.deepEqual(libc.residentPages(files[1].path), [0, 1], 'the others stay');
    assert.deepEqual(libc.closed, [fd]);
    assert.equal(isOpen(fd), false);
    const stats = await started.keeper.stop();
    assert.equal(stats.events?.closeEvictions, 1);
    assert.equal(stats.reEvictions, 1);
    assert.equal(stats.errors, 0);
    assert.equal(libc.groupOpen, false, 'the group is closed at stop');
    assert.equal(libc.opened, 0, 'no open of its own');
  });

  it('keeps the descriptor of a file read and not closed, sweeps through it, and closes it at its close and at stop', async () => {
    const { files, libc } = dataset('held');
    const started = startFanotifyKeeper(libc, files, MANUAL);
    assert.ok(started.ok);
    const first = fs.openSync(files[1].path, 'r');
    libc.queue.push(fanotifyEvent(0x1, first));
    await started.keeper.scanNow(); // a sweep: the pages just seen stay one sweep
    assert.equal(isOpen(first), true, 'kept for the sweeps');
    assert.deepEqual(libc.residentPages(files[1].path), [0, 1]);
    await started.keeper.scanNow(); // old now: swept out
    assert.deepEqual(libc.residentPages(files[1].path), []);
    // A second read event of the same file brings a second descriptor: closed at once, the first is kept.
    const second = fs.openSync(files[1].path, 'r');
    libc.queue.push(fanotifyEvent(0x1, second));
    await started.keeper.scanNow();
    assert.equal(isOpen(second), false);
    assert.equal(isOpen(first), true);
    // Its close: both the close's descriptor and the kept one are closed.
    const closing = fs.openSync(files[1].path, 'r');
    libc.queue.push(fanotifyEvent(0x10, closing));
    await started.keeper.scanNow();
    assert.equal(isOpen(first), false);
    assert.equal(isOpen(closing), false);
    // Another file read and still open at stop: closed by stop.
    const open = fs.openSync(files[2].path, 'r');
    libc.queue.push(fanotifyEvent(0x1, open));
    await started.keeper.scanNow();
    const stats = await started.keeper.stop();
    assert.equal(isOpen(open), false);
    assert.equal(stats.events?.sweepEvictions, 1);
    assert.equal(stats.events?.closeEvictions, 1);
    assert.equal(stats.errors, 0, stats.lastError);
  });

  it('after an overflow, evicts every file once, with its own descriptors', async () => {
    const { files, libc } = dataset('overflow');
    const started = startFanotifyKeeper(libc, files, MANUAL);
    assert.ok(started.ok);
    libc.queue.push(fanotifyEvent(0x4000, -1));
    await started.keeper.scanNow();
    for (const file of files) assert.deepEqual(libc.residentPages(file.path), [], file.path);
    const stats = await started.keeper.stop();
    assert.equal(stats.events?.queueOverflows, 1);
    assert.equal(stats.events?.overflowSweptFiles, 3);
    assert.equal(libc.opened, 3);
    assert.equal(libc.closed.length, 3, 'every descriptor it opened is closed');
  });

  it("closes the descriptors of one read's events together: each once, a run of consecutive ones in one close_range", async () => {
    const { files, libc } = dataset('batch');
    const started = startFanotifyKeeper(libc, files, MANUAL);
    assert.ok(started.ok);
    const fds = files.map((file) => fs.openSync(file.path, 'r'));
    for (const fd of fds) libc.queue.push(fanotifyEvent(0x1 | 0x10, fd));
    await started.keeper.scanNow();
    for (const file of files) assert.deepEqual(libc.residentPages(file.path), [], file.path);
    assert.deepEqual(
      [...libc.closed].sort((a, b) => a - b),
      [...fds].sort((a, b) => a - b),
      'every event descriptor closed once',
    );
    for (const fd of fds) assert.equal(isOpen(fd), false);
    const sorted = [...fds].sort((a, b) => a - b);
    const consecutive = sorted.every((fd, i) => i === 0 || fd === sorted[i - 1] + 1);
    if (consecutive) assert.deepEqual(libc.closedRanges, [[sorted[0], sorted[2]]]);
    const stats = await started.keeper.stop();
    assert.equal(stats.events?.closeEvictions, 3);
  });

  it("keeps a held file's descriptor out of the batch it came in, and closes it at its close event", async () => {
    const { files, libc } = dataset('held-batch');
    const started = startFanotifyKeeper(libc, files, MANUAL);
    assert.ok(started.ok);
    const readFd = fs.openSync(files[0].path, 'r');
    const other = fs.openSync(files[1].path, 'r');
    libc.queue.push(fanotifyEvent(0x1, readFd), fanotifyEvent(0x1 | 0x10, other));
    await started.keeper.scanNow();
    assert.equal(isOpen(readFd), true, 'the file being read keeps its descriptor');
    assert.equal(isOpen(other), false);
    const closeFd = fs.openSync(files[0].path, 'r');
    libc.queue.push(fanotifyEvent(0x10, closeFd));
    await started.keeper.scanNow();
    assert.equal(isOpen(readFd), false, 'released at its close');
    assert.equal(isOpen(closeFd), false);
    assert.deepEqual(
      [...libc.closed].sort((a, b) => a - b),
      [readFd, other, closeFd].sort((a, b) => a - b),
    );
    await started.keeper.stop();
  });

  it('charges its metered CPU to the ledger as keeper: the seconds its stats say', async () => {
    const { files, libc } = dataset('ledger');
    const ledger = new CpuLedger();
    const started = startFanotifyKeeper(libc, files, { ...MANUAL, ledger });
    assert.ok(started.ok);
    const fd = fs.openSync(files[0].path, 'r');
    libc.queue.push(fanotifyEvent(0x1 | 0x10, fd));
    await started.keeper.scanNow();
    const stats = await started.keeper.stop();
    const reading = ledger.reading();
    assert.ok(reading.keeper.calls >= 1);
    assert.ok(
      Math.abs(reading.keeper.cpuSec - stats.cpuSec) < 1e-12,
      `ledger ${reading.keeper.cpuSec} vs stats ${stats.cpuSec}`,
    );
    assert.equal(reading.sampler.calls + reading.warming.calls, 0);
  });

  it('counts an event it cannot read instead of guessing where its descriptor is', async () => {
    const { files, libc } = dataset('version');
    const started = startFanotifyKeeper(libc, files, MANUAL);
    assert.ok(started.ok);
    const fd = fs.openSync(files[0].path, 'r');
    libc.queue.push(fanotifyEvent(0x10, fd, 4));
    await started.keeper.scanNow();
    const stats = await started.keeper.stop();
    assert.equal(stats.errors, 1);
    assert.match(stats.lastError ?? '', /another metadata version/);
    assert.deepEqual(libc.closed, [], "a descriptor found by guessing could be another file's");
    fs.closeSync(fd);
  });
});
