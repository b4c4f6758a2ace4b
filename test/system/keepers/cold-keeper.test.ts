import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startColdKeeper, type ColdKeeperOptions } from '../../../src/system/keepers/cold-keeper.js';
import { listDataset } from '../../../src/system/dataset/dataset.js';
import { tableOf } from '../../../src/system/dataset/file-table.js';
import { loadLibc } from '../../../src/system/kernel/libc.js';
import { fanotifyUnavailable, inotifyUnavailable } from './keeper-environment.js';
import { evict, pageCacheSupport, residency, residentBytesOfFd } from '../../../src/system/page-cache/page-cache.js';

const MiB = 1024 * 1024;
const support = pageCacheSupport();
const skip = !support.residency || !support.evict ? `page-cache control unavailable: ${support.reason}` : false;
// Long enough never to fire during a test: the keeper is driven with scanNow().
const MANUAL = { intervalMs: 3_600_000, sweepIntervalMs: 3_600_000 };
const SCAN: ColdKeeperOptions = { ...MANUAL, mechanism: 'scan' };

// POSIX_FADV_RANDOM turns read-ahead off for the descriptor, so a partial read
// leaves exactly the pages read (read_ahead_kb is 8 MiB on some disks here).
const FADV_RANDOM = 1;

function readRange(fd: number, offset: number, length: number): void {
  const libc = loadLibc();
  if (libc.ok) libc.libc.posixFadvise(fd, 0, 0, FADV_RANDOM);
  const buffer = Buffer.allocUnsafe(MiB);
  for (let done = 0; done < length; ) {
    const n = fs.readSync(fd, buffer, 0, Math.min(MiB, length - done), offset + done);
    if (n === 0) break;
    done += n;
  }
}

/** Opens, reads and closes, as a job's loader does. */
function readFile(file: string, offset: number, length: number): void {
  const fd = fs.openSync(file, 'r');
  try {
    readRange(fd, offset, length);
  } finally {
    fs.closeSync(fd);
  }
}

/** Bytes this process has read from storage (/proc/self/io), or null. */
function storageReadBytes(): number | null {
  try {
    const match = /^read_bytes:\s*(\d+)/m.exec(fs.readFileSync('/proc/self/io', 'utf8'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

async function until(condition: () => boolean, deadlineMs = 30_000): Promise<boolean> {
  // A deadline, not a timing assertion: on a busy machine it just takes longer.
  const deadline = Date.now() + deadlineMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

describe('cold keeper', { skip }, () => {
  let dir: string;
  let file: string;
  // A descriptor opened before any keeper starts: mincore through it makes no
  // inotify events, so checking residency never triggers the keeper under test.
  let probe: number;
  const size = 16 * MiB;
  const libc = loadLibc();
  const resident = (): number => (libc.ok ? residentBytesOfFd(libc.libc, probe, size) / size : NaN);

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsa-cold-keeper-'));
    file = path.join(dir, 'epoch.bin');
    fs.writeFileSync(file, Buffer.concat(Array.from({ length: size / MiB }, () => randomBytes(MiB))));
    await evict([{ path: file }], { sync: true });
    probe = fs.openSync(file, 'r');
  });
  after(() => {
    fs.closeSync(probe);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  // The two event-driven keepers behave alike; each runs where the machine can run it (fanotify: root).
  for (const mechanism of ['fanotify', 'inotify'] as const) {
    describe(mechanism, () => {
      // Skipped only where the machine cannot run this keeper; where it can, a keeper that falls back fails here.
      const mechanismSkip: string | false =
        (mechanism === 'fanotify' ? fanotifyUnavailable() : inotifyUnavailable()) ?? false;
      const EVENTS: ColdKeeperOptions = { ...MANUAL, mechanism };
      before(async () => {
        if (mechanismSkip) return;
        const keeper = startColdKeeper([{ path: file }], EVENTS);
        const stats = await keeper.stop();
        assert.equal(
          stats.mechanism,
          mechanism,
          `the keeper fell back on a machine that has ${mechanism}: ${stats.fallbackReason}`,
        );
      });
      it('evicts a file once the job has read and closed it, and not again for its own opens', async (t) => {
        if (mechanismSkip) return t.skip(mechanismSkip);
        await evict([{ path: file }], { sync: false });
        const keeper = startColdKeeper([{ path: file }], EVENTS);
        readFile(file, 0, size);
        assert.ok(resident() > 0.99, `read in: ${resident()}`);
        await keeper.scanNow();
        assert.ok(resident() < 0.01, `left after the close was handled: ${resident()}`);
        // The eviction's own open and close are events too: they must not evict again, drain after drain.
        for (let i = 0; i < 3; i++) await keeper.scanNow();
        const stats = await keeper.stop();
        assert.equal(stats.mechanism, mechanism);
        assert.equal(stats.events?.closeEvents, 1);
        assert.equal(stats.events?.closeEvictions, 1);
        assert.equal(stats.reEvictions, 1);
        // fanotify does not learn a closed file's size (keeper-types.ts).
        assert.equal(stats.reEvictedBytes, mechanism === 'inotify' ? size : 0);
        assert.equal(stats.errors, 0);
        assert.ok(stats.cpuSec > 0);
      });

      it('over the compact table a dataset walk returns, finds the closed file without a map of every path', async (t) => {
        if (mechanismSkip) return t.skip(mechanismSkip);
        const dataset = await listDataset([dir]);
        assert.ok(tableOf(dataset.files), 'the walk returns a table view');
        await evict([{ path: file }], { sync: false });
        const keeper = startColdKeeper(dataset.files, EVENTS);
        readFile(file, 0, size);
        await keeper.scanNow();
        assert.ok(resident() < 0.01, `left after the close was handled: ${resident()}`);
        const stats = await keeper.stop();
        assert.equal(stats.events?.closeEvictions, 1);
        if (mechanism === 'inotify') assert.equal(stats.reEvictedBytes, size, 'the size comes from the table');
      });

      it('on its own timer, a second epoch finds the file cold and reads it from storage', async (t) => {
        if (mechanismSkip) return t.skip(mechanismSkip);
        await evict([{ path: file }], { sync: false });
        const keeper = startColdKeeper([{ path: file }], { intervalMs: 20, mechanism });
        readFile(file, 0, size); // first epoch
        const evicted = await until(() => resident() < 0.01);
        assert.ok(evicted, `still resident after the first epoch: ${resident()}`);
        const readBefore = storageReadBytes();
        readFile(file, 0, size); // second epoch
        const readAfter = storageReadBytes();
        if (readBefore !== null && readAfter !== null) {
          assert.ok(
            readAfter - readBefore >= 0.9 * size,
            `second epoch read ${readAfter - readBefore} bytes from storage`,
          );
        } else {
          t.diagnostic('storage reads not checked: /proc/self/io cannot be read here');
        }
        assert.ok(await until(() => resident() < 0.01), `still resident after the second epoch: ${resident()}`);
        const stats = await keeper.stop();
        assert.ok(stats.reEvictions >= 2, `re-evictions: ${stats.reEvictions}`);
      });

      it('sweeps a file held open while it is streamed, page by page', async (t) => {
        if (mechanismSkip) return t.skip(mechanismSkip);
        await evict([{ path: file }], { sync: false });
        const keeper = startColdKeeper([{ path: file }], EVENTS);
        const shard = fs.openSync(file, 'r');
        try {
          readRange(shard, 0, size / 2);
          await keeper.scanNow(); // first half seen: it may be read-ahead the job is about to use
          assert.ok(resident() > 0.45 && resident() <= 0.5, `after one sweep: ${resident()}`);
          await keeper.scanNow(); // first half old now
          assert.ok(resident() < 0.01, `after two sweeps: ${resident()}`);
          readRange(shard, size / 2, size / 2);
          await keeper.scanNow();
          await keeper.scanNow();
          assert.ok(resident() < 0.01, `second half after two sweeps: ${resident()}`);
        } finally {
          fs.closeSync(shard);
        }
        await keeper.scanNow();
        const stats = await keeper.stop();
        assert.equal(stats.events?.sweepEvictions, 2);
        assert.equal(stats.events?.closeEvictions, 1, 'the final close evicts what is left');
        assert.equal(stats.reEvictions, 3);
      });

      it('sweeps a file held open on its own timer', async (t) => {
        if (mechanismSkip) return t.skip(mechanismSkip);
        await evict([{ path: file }], { sync: false });
        const keeper = startColdKeeper([{ path: file }], { intervalMs: 20, sweepIntervalMs: 50, mechanism });
        const shard = fs.openSync(file, 'r');
        try {
          readRange(shard, 0, size);
          assert.ok(await until(() => resident() < 0.01), `still resident while held open: ${resident()}`);
        } finally {
          fs.closeSync(shard);
        }
        const stats = await keeper.stop();
        assert.ok((stats.events?.sweepEvictions ?? 0) >= 1);
        assert.ok(stats.sweeps >= 2);
      });

      // The fanotify keeper's queue is unlimited: only inotify's can overflow.
      if (mechanism === 'inotify')
        it('after a queue overflow, evicts every file once', async (t) => {
          if (mechanismSkip) return t.skip(mechanismSkip);
          const queued = Number(fs.readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8'));
          if (!(queued <= 100_000))
            return t.skip(`max_queued_events is ${queued}: too many events to overflow in a test`);
          const noisy = [path.join(dir, 'noisy-a.bin'), path.join(dir, 'noisy-b.bin')];
          for (const other of noisy) fs.writeFileSync(other, 'x');
          await evict([{ path: file }], { sync: false });
          const keeper = startColdKeeper([{ path: file }, ...noisy.map((other) => ({ path: other }))], EVENTS);
          readFile(file, 0, size);
          // One close event each; alternating between two files, so that the kernel cannot merge them.
          for (let i = 0; i <= queued; i++) fs.closeSync(fs.openSync(noisy[i % 2], 'r'));
          await keeper.scanNow();
          const stats = await keeper.stop();
          assert.ok(resident() < 0.01, `left after the overflow: ${resident()}`);
          assert.ok((stats.events?.queueOverflows ?? 0) >= 1);
          assert.ok((stats.events?.overflowSweptFiles ?? 0) >= 3);
        });

      it('falls back to scanning, and says why, when a directory cannot be watched', async (t) => {
        if (mechanismSkip) return t.skip(mechanismSkip);
        const keeper = startColdKeeper([{ path: path.join(dir, 'no-such-dir', 'x.bin') }, { path: file }], EVENTS);
        const stats = await keeper.stop();
        assert.equal(stats.mechanism, 'scan');
        assert.match(
          stats.fallbackReason ?? '',
          mechanism === 'inotify' ? /cannot watch .*no-such-dir.*ENOENT/ : /cannot mark .*no-such-dir.*ENOENT/,
        );
      });
    });
  }

  describe('scan', () => {
    it('leaves pages that just arrived and evicts them at the next scan', async () => {
      await evict([{ path: file }], { sync: false });
      const keeper = startColdKeeper([{ path: file }], SCAN);
      readFile(file, 0, size); // first epoch
      assert.ok((await residency([{ path: file }])).fraction > 0.99);

      await keeper.scanNow();
      assert.ok((await residency([{ path: file }])).fraction > 0.99, 'a file just read is not dropped at once');

      await keeper.scanNow();
      const beforeSecondEpoch = await residency([{ path: file }]);
      assert.ok(beforeSecondEpoch.fraction < 0.01, `fraction before the second read: ${beforeSecondEpoch.fraction}`);

      const stats = await keeper.stop();
      assert.equal(stats.mechanism, 'scan');
      assert.equal(stats.fallbackReason, undefined);
      assert.equal(stats.sweeps, 2);
      assert.equal(stats.reEvictions, 1);
      assert.equal(stats.reEvictedBytes, size);
      assert.equal(stats.errors, 0);
      assert.ok(stats.cpuSec > 0);
    });

    it('compares page by page: a streamed file loses only what was read before the last scan', async () => {
      await evict([{ path: file }], { sync: false });
      const keeper = startColdKeeper([{ path: file }], SCAN);
      readFile(file, 0, size / 2);
      await keeper.scanNow(); // first half seen
      readFile(file, size / 2, size / 2);
      await keeper.scanNow(); // first half evicted, second half only seen
      const stats = await keeper.stop();
      const left = await residency([{ path: file }]);
      assert.ok(left.fraction > 0.45 && left.fraction <= 0.5, `fraction left: ${left.fraction}`);
      assert.equal(stats.reEvictedBytes, size / 2);
      assert.equal(stats.reEvictions, 1);
    });

    it('keeps a file read twice cold on its own timer', async () => {
      await evict([{ path: file }], { sync: false });
      const keeper = startColdKeeper([{ path: file }], { intervalMs: 20, mechanism: 'scan' });
      readFile(file, 0, size);
      assert.ok(await until(() => resident() < 0.01), `still resident: ${resident()}`);
      const stats = await keeper.stop();
      assert.ok(stats.sweeps >= 2);
      assert.ok(stats.reEvictions >= 1);
      assert.ok((stats.effectiveIntervalMs ?? 0) >= 20);
    });

    it('counts a vanished file as an error instead of throwing', async () => {
      const doomed = path.join(dir, 'doomed.bin');
      fs.writeFileSync(doomed, 'x');
      const keeper = startColdKeeper([{ path: doomed }, { path: file }], SCAN);
      fs.rmSync(doomed);
      await keeper.scanNow();
      const stats = await keeper.stop();
      assert.equal(stats.sweeps, 1);
      assert.equal(stats.errors, 1);
      assert.match(stats.lastError ?? '', /doomed\.bin: ENOENT/);
    });
  });

  for (const mechanism of ['auto', 'scan'] as const) {
    it(`does not keep the process alive (${mechanism})`, async () => {
      const moduleUrl = new URL('../../../src/system/keepers/cold-keeper.js', import.meta.url).href;
      const script = `import { startColdKeeper } from ${JSON.stringify(moduleUrl)};
        startColdKeeper([{ path: ${JSON.stringify(file)} }], { intervalMs: 5, sweepIntervalMs: 5, mechanism: '${mechanism}' });`;
      const run = promisify(execFile);
      // Resolves only if the child exits by itself (the timeout kills a hung one and rejects).
      await run(process.execPath, ['--input-type=module', '-e', script], {
        timeout: 30_000,
        cwd: path.dirname(fileURLToPath(import.meta.url)),
      });
    });
  }
});

describe("the keepers' table of a plain list of files", () => {
  it('groups the files by directory, with their sizes where given, and lists each directory to watch once', async () => {
    const { keeperTable, watchedDirs } = await import('../../../src/system/keepers/keeper-dataset.js');
    const files: { path: string; bytes?: number }[] = [
      { path: '/d/b.bin', bytes: 2 },
      { path: '/d/a.bin' },
      { path: 'rel.bin', bytes: 1 },
      { path: '/e/c.bin', bytes: 3 },
    ];
    const table = keeperTable(files);
    assert.deepEqual(
      Array.from({ length: table.length }, (_, k) => [table.path(k), table.sizes[k]]),
      [
        ['./rel.bin', 1],
        ['/d/a.bin', -1],
        ['/d/b.bin', 2],
        ['/e/c.bin', 3],
      ],
    );
    assert.deepEqual(
      watchedDirs(table).map((w) => w.path),
      ['.', '/d', '/e'],
    );
    assert.equal(table.indexOfName(watchedDirs(table)[1].dir, Buffer.from('b.bin')), 2);
  });
});

describe('a keeper of part of a directory', () => {
  it('runs on inotify, which leaves the other files of the directory alone', {
    skip: fanotifyUnavailable() ?? inotifyUnavailable() ?? false,
  }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsa-only-listed-'));
    try {
      const [kept, held] = ['kept.bin', 'held.bin'].map((name) => path.join(dir, name));
      for (const file of [kept, held]) fs.writeFileSync(file, randomBytes(64 * 1024));
      // Written back first: DONTNEED cannot drop dirty pages.
      await evict([{ path: kept }, { path: held }], { sync: true });
      const keeper = startColdKeeper([{ path: kept }], { ...MANUAL, onlyListed: true });
      for (const file of [kept, held]) readFile(file, 0, 64 * 1024);
      await keeper.scanNow();
      const stats = await keeper.stop();
      assert.equal(stats.mechanism, 'inotify', 'as root, auto would have chosen fanotify');
      assert.equal((await residency([{ path: kept }])).fraction, 0, 'the listed file was evicted');
      assert.equal((await residency([{ path: held }])).fraction, 1, 'the file beside it was not');
      const named = startColdKeeper([{ path: kept }], { ...MANUAL, mechanism: 'fanotify', onlyListed: true });
      const namedStats = await named.stop();
      assert.equal(namedStats.mechanism, 'scan');
      assert.match(namedStats.fallbackReason ?? '', /fanotify cannot tell the listed files from the others/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
