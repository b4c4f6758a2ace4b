import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { inotifyUnavailable } from './keeper-environment.js';
import { CacheLru } from '../../../src/system/keepers/eviction-policy.js';
import { requireCacheCap } from '../../../src/system/keepers/cache-cap.js';
import { startInotifyKeeper, type InotifyKeeper } from '../../../src/system/keepers/inotify-keeper.js';
import { evict, pageCacheSupport } from '../../../src/system/page-cache/page-cache.js';
import { judgeResidency } from '../../../src/validate/held.js';
import { FakeInotifyKernel } from '../../support/fake-kernel.js';

const MiB = 1024 * 1024;
// Long enough never to fire during a test: the keeper is driven with scanNow().
const MANUAL = { drainMs: 3_600_000, sweepMs: 3_600_000 };

describe('cache LRU', () => {
  it('evicts the least recently closed files until the rest fit, and a re-closed file becomes the newest', () => {
    const lru = new CacheLru();
    for (const name of ['a', 'b', 'c', 'd']) lru.closed(name, 10);
    lru.closed('a', 10);
    assert.deepEqual(lru.paths(), ['b', 'c', 'd', 'a']);
    assert.deepEqual(lru.overBudget(25), ['b', 'c']);
    assert.equal(lru.heldBytes, 20);
    assert.deepEqual(lru.overBudget(20), []);
  });

  it('a file read again leaves the LRU until its next close; a file larger than the budget is never held', () => {
    const lru = new CacheLru();
    lru.closed('a', 10);
    lru.closed('b', 10);
    lru.remove('a');
    assert.equal(lru.heldBytes, 10);
    assert.deepEqual(lru.overBudget(15), []);
    lru.closed('big', 50);
    assert.deepEqual(lru.overBudget(15), ['b', 'big']);
    assert.equal(lru.heldBytes, 0);
  });

  it('a budget of 0 (the cold keeper) empties it, files of unknown size too', () => {
    const lru = new CacheLru();
    lru.closed('a', 0);
    lru.closed('b', 5);
    assert.deepEqual(lru.overBudget(0), ['a', 'b']);
    assert.deepEqual(lru.paths(), []);
  });
});

function fakeDataset(megabytes: Record<string, number>) {
  const sizes = new Map(Object.entries(megabytes).map(([name, mb]) => [`/fake/data/${name}`, mb * MiB]));
  const kernel = new FakeInotifyKernel(sizes);
  const files = [...sizes].map(([file, bytes]) => ({ path: file, bytes }));
  const start = (capBytes: number): InotifyKeeper => {
    const started = startInotifyKeeper(kernel.libc, files, { ...MANUAL, capBytes });
    assert.ok(started.ok, started.ok ? '' : started.reason);
    return started.keeper;
  };
  return { kernel, start, file: (name: string) => `/fake/data/${name}` };
}

describe('cache cap (fake kernel)', () => {
  it('holds the target as an LRU by close time; its own opens evict nothing more', async () => {
    const { kernel, start, file } = fakeDataset({ a: 1, b: 1, c: 1, d: 1, e: 1, f: 1 });
    const cap = start(3 * MiB);
    for (const name of ['a', 'b', 'c', 'd', 'e']) kernel.readAndClose(file(name));
    await cap.scanNow();
    assert.deepEqual(kernel.evictions, ['a', 'b']);
    assert.equal(kernel.total(), 3 * MiB);
    // c is read again: it becomes the newest, so f's arrival evicts d, not c.
    kernel.readAndClose(file('c'));
    kernel.readAndClose(file('f'));
    for (let k = 0; k < 3; k++) await cap.scanNow();
    assert.deepEqual(kernel.evictions, ['a', 'b', 'd']);
    assert.equal(kernel.total(), 3 * MiB);
    const reading = cap.readResidency(1000)!;
    assert.deepEqual(
      { resident: reading.residentBytes, held: reading.heldBytes, exact: reading.exact },
      { resident: 3 * MiB, held: 3 * MiB, exact: true },
    );
    const stats = await cap.stop();
    assert.equal(stats.events?.closeEvents, 7, "the job closed 7 files; the keeper's own closes are not counted");
    assert.equal(stats.errors, 0);
  });

  it('a file larger than the target is evicted once closed; the files held stay', async () => {
    const { kernel, start, file } = fakeDataset({ a: 1, b: 1, big: 5 });
    const cap = start(3 * MiB);
    kernel.readAndClose(file('a'));
    kernel.readAndClose(file('b'));
    kernel.readAndClose(file('big'));
    await cap.scanNow();
    // Oldest first: a and b go before big is found still too large.
    assert.deepEqual(kernel.evictions, ['a', 'b', 'big']);
    kernel.readAndClose(file('a'));
    await cap.scanNow();
    assert.equal(kernel.total(), 1 * MiB);
    await cap.stop();
  });

  it('a file held open counts against the target as the newest; once idle it enters the LRU', async () => {
    const { kernel, start, file } = fakeDataset({ a: 1, b: 1, c: 1, shard: 2 });
    const cap = start(3 * MiB);
    for (const name of ['a', 'b', 'c']) kernel.readAndClose(file(name));
    kernel.read(file('shard'));
    await cap.scanNow();
    assert.deepEqual(kernel.evictions, ['a', 'b'], 'the open shard holds 2 MiB: 1 MiB is left for closed files');
    assert.equal(kernel.total(), 3 * MiB);
    // Idle for three sweeps: the shard is cached and done with, an LRU entry like a closed file.
    for (let k = 0; k < 4; k++) await cap.scanNow();
    kernel.readAndClose(file('a'));
    await cap.scanNow();
    assert.deepEqual(kernel.evictions, ['a', 'b', 'c'], 'c, closed before the shard went idle, is the oldest');
    assert.equal(kernel.total(), 3 * MiB);
    await cap.stop();
  });

  it('a sampled residency reading scales the samples of each group by its bytes', async () => {
    const sizes: Record<string, number> = {};
    for (let k = 0; k < 40; k++) sizes[`f${k}`] = 1;
    const { kernel, start, file } = fakeDataset(sizes);
    const cap = start(10 * MiB);
    for (let k = 0; k < 10; k++) kernel.readAndClose(file(`f${k}`));
    await cap.scanNow();
    let seed = 1;
    const random = (): number => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const reading = cap.readResidency(4, random)!;
    assert.equal(reading.exact, false);
    assert.equal(reading.measuredFiles, 8);
    // Held files all resident, the others all evicted: any sample gives the exact answer.
    assert.equal(reading.residentBytes, 10 * MiB);
    // A file the cap does not know of, resident anyway (read under its nose, events lost): the others' sample sees it.
    kernel.resident.set(file('f39'), MiB);
    const exact = cap.readResidency(100)!;
    assert.equal(exact.residentBytes, 11 * MiB);
    await cap.stop();
  });
});

const support = pageCacheSupport();
const skipReal = !support.residency || !support.evict ? `page-cache control unavailable: ${support.reason}` : false;

// A reader in its own process, as a job's loader: each epoch reads every file
// in a new random order, opening, reading and closing each; it prints each epoch's start.
const READER = `
const fs = require('node:fs');
const [dir, epochs] = [process.argv[1], Number(process.argv[2])];
const files = fs.readdirSync(dir).map((f) => dir + '/' + f);
const buffer = Buffer.alloc(1 << 20);
const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
for (let e = 1; e <= epochs; e++) {
  process.stdout.write('epoch ' + e + '\\n');
  for (const f of files.sort(() => Math.random() - 0.5)) {
    const fd = fs.openSync(f, 'r');
    while (fs.readSync(fd, buffer) > 0);
    fs.closeSync(fd);
    sleep(5);
  }
}
process.stdout.write('done\\n');
`;

describe('cache cap (real page cache)', { skip: skipReal }, () => {
  it('holds a reader process at the target within ±10% (mincore), from the second epoch on', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsa-cache-cap-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const files = Array.from({ length: 48 }, (_, k) => {
      const file = path.join(dir, `f${String(k).padStart(2, '0')}.bin`);
      fs.writeFileSync(file, Buffer.alloc(512 * 1024, k + 1));
      return { path: file, bytes: 512 * 1024 };
    });
    await evict(files, { sync: true });
    const datasetBytes = 48 * 512 * 1024;
    const target = datasetBytes / 2;
    let cap: InotifyKeeper;
    try {
      cap = requireCacheCap(files, { capBytes: target, drainMs: 10, sweepMs: 100 });
    } catch (error) {
      const unavailable = inotifyUnavailable();
      if (unavailable) return t.skip(`the cap cannot run here: ${unavailable}`);
      throw error;
    }
    const reader = spawn(process.execPath, ['-e', READER, dir, '4'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let epoch = 0;
    reader.stdout.on('data', (chunk: Buffer) => {
      for (const match of chunk.toString().matchAll(/epoch (\d+)/g)) epoch = Number(match[1]);
    });
    const exited = new Promise<number | null>((resolve) => reader.on('exit', resolve));
    const readings: number[] = [];
    let running = true;
    void exited.then(() => (running = false));
    while (running) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const reading = cap.readResidency(1000);
      if (reading && epoch >= 2 && running) readings.push(reading.residentBytes);
    }
    assert.equal(await exited, 0);
    const stats = await cap.stop();
    assert.equal(stats.errors, 0, stats.lastError);
    const verdict = judgeResidency(readings, target, datasetBytes);
    assert.ok(verdict.readings >= 3, `readings in epochs 2-4: ${verdict.readings}`);
    assert.ok(Math.abs(verdict.meanBytes! - target) <= 0.1 * target, `mean ${verdict.meanBytes} against ${target}`);
    assert.ok(verdict.held, JSON.stringify(verdict));
  });
});
