import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startColdKeeper } from '../../src/system/cold-keeper.js';
import { loadLibc } from '../../src/system/libc.js';
import { evict, pageCacheSupport, residency } from '../../src/system/page-cache.js';

const MiB = 1024 * 1024;
const support = pageCacheSupport();
const skip = !support.residency || !support.evict ? `page-cache control unavailable: ${support.reason}` : false;
// Long enough never to fire during a test: scans are driven with scanNow().
const MANUAL = { intervalMs: 3_600_000 };

// POSIX_FADV_RANDOM turns read-ahead off for the descriptor, so a partial read
// leaves exactly the pages read (read_ahead_kb is 8 MiB on some disks here).
const FADV_RANDOM = 1;

function readRange(file: string, offset: number, length: number): void {
  const fd = fs.openSync(file, 'r');
  const libc = loadLibc();
  if (libc.ok) libc.libc.posixFadvise(fd, 0, 0, FADV_RANDOM);
  const buffer = Buffer.allocUnsafe(MiB);
  for (let done = 0; done < length; ) {
    const n = fs.readSync(fd, buffer, 0, Math.min(MiB, length - done), offset + done);
    if (n === 0) break;
    done += n;
  }
  fs.closeSync(fd);
}

describe('cold keeper', { skip }, () => {
  let dir: string;
  let file: string;
  const size = 16 * MiB;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsa-cold-keeper-'));
    file = path.join(dir, 'epoch.bin');
    fs.writeFileSync(file, Buffer.concat(Array.from({ length: size / MiB }, () => randomBytes(MiB))));
    await evict([{ path: file }], { sync: true });
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('leaves pages that just arrived and evicts them at the next scan', async () => {
    await evict([{ path: file }], { sync: false });
    const keeper = startColdKeeper([{ path: file }], MANUAL);
    readRange(file, 0, size); // first epoch
    assert.ok((await residency([{ path: file }])).fraction > 0.99);

    await keeper.scanNow();
    assert.ok((await residency([{ path: file }])).fraction > 0.99, 'a file just read is not dropped at once');

    await keeper.scanNow();
    const beforeSecondEpoch = await residency([{ path: file }]);
    assert.ok(beforeSecondEpoch.fraction < 0.01, `fraction before the second read: ${beforeSecondEpoch.fraction}`);

    const stats = await keeper.stop();
    assert.equal(stats.scans, 2);
    assert.equal(stats.reEvictions, 1);
    assert.equal(stats.reEvictedBytes, size);
    assert.equal(stats.errors, 0);
  });

  it('compares page by page: a streamed file loses only what was read before the last scan', async () => {
    await evict([{ path: file }], { sync: false });
    const keeper = startColdKeeper([{ path: file }], MANUAL);
    readRange(file, 0, size / 2);
    await keeper.scanNow(); // first half seen
    readRange(file, size / 2, size / 2);
    await keeper.scanNow(); // first half evicted, second half only seen
    const stats = await keeper.stop();
    const left = await residency([{ path: file }]);
    assert.ok(left.fraction > 0.45 && left.fraction <= 0.5, `fraction left: ${left.fraction}`);
    assert.equal(stats.reEvictedBytes, size / 2);
    assert.equal(stats.reEvictions, 1);
  });

  it('keeps a file read twice cold on its own timer', async () => {
    await evict([{ path: file }], { sync: false });
    const keeper = startColdKeeper([{ path: file }], { intervalMs: 20 });
    readRange(file, 0, size);
    // A deadline, not a timing assertion: on a busy machine it just takes longer.
    const deadline = Date.now() + 30_000;
    let fraction = 1;
    while (Date.now() < deadline) {
      fraction = (await residency([{ path: file }])).fraction;
      if (fraction < 0.01) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const stats = await keeper.stop();
    assert.ok(fraction < 0.01, `still resident: ${fraction}`);
    assert.ok(stats.scans >= 2);
    assert.ok(stats.reEvictions >= 1);
    assert.ok(stats.effectiveIntervalMs >= 20);
  });

  it('counts a vanished file as an error instead of throwing', async () => {
    const doomed = path.join(dir, 'doomed.bin');
    fs.writeFileSync(doomed, 'x');
    const keeper = startColdKeeper([{ path: doomed }, { path: file }], MANUAL);
    fs.rmSync(doomed);
    await keeper.scanNow();
    const stats = await keeper.stop();
    assert.equal(stats.scans, 1);
    assert.equal(stats.errors, 1);
    assert.match(stats.lastError ?? '', /doomed\.bin: ENOENT/);
  });

  it('does not keep the process alive', async () => {
    const moduleUrl = new URL('../../src/system/cold-keeper.js', import.meta.url).href;
    const script = `import { startColdKeeper } from ${JSON.stringify(moduleUrl)};
      startColdKeeper([{ path: ${JSON.stringify(file)} }], { intervalMs: 5 });`;
    const run = promisify(execFile);
    // Resolves only if the child exits by itself (the timeout kills a hung one and rejects).
    await run(process.execPath, ['--input-type=module', '-e', script], {
      timeout: 30_000,
      cwd: path.dirname(fileURLToPath(import.meta.url)),
    });
  });
});
