import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type ExitCode, UserError, inputError } from '../../../src/errors.js';

// The exit code of an input-path error, whatever the enum calls it.
const INPUT_EXIT_CODE = inputError('probe').exitCode;
import { fileBytesQuantiles, listDataset, memoryBudget } from '../../../src/system/dataset/dataset.js';
import { expectedWholeDisk } from '../kernel/whole-disk.js';

const plentyOfMemory = async (): Promise<string> => 'MemTotal: 100000000 kB\nMemAvailable: 50000000 kB\n';

function assertUserError(error: unknown, message: string | RegExp, exitCode: ExitCode): true {
  assert.ok(error instanceof UserError, `not a UserError: ${String(error)}`);
  assert.equal(error.exitCode, exitCode);
  if (typeof message === 'string') assert.equal(error.message, message);
  else assert.match(error.message, message);
  assert.doesNotMatch(error.message, /\n/);
  return true;
}

describe('listDataset', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsa-dataset-'));
    const write = (relative: string, bytes: number): void => {
      fs.mkdirSync(path.dirname(path.join(dir, relative)), { recursive: true });
      fs.writeFileSync(path.join(dir, relative), Buffer.alloc(bytes, 7));
    };
    write('data/train/cat/1.jpg', 100);
    write('data/train/cat/2.jpg', 200);
    write('data/train/dog/3.jpg', 300);
    write('data/val/deep/er/still/4.jpg', 400);
    write('data/.hidden', 50);
    write('data/empty.txt', 0);
    // A symlink loop back to the root, and a link to a file outside it.
    fs.symlinkSync('..', path.join(dir, 'data/train/loop'));
    write('outside/shard.tar', 1000);
    fs.symlinkSync(path.join(dir, 'outside/shard.tar'), path.join(dir, 'data/shard-link.tar'));
    fs.mkdirSync(path.join(dir, 'nothing/inside'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'nothing/zero'), '');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('lists every regular, non-hidden file of nested folders once, following links without looping', async () => {
    const root = path.join(dir, 'data');
    const dataset = await listDataset([root], { readMeminfo: plentyOfMemory });
    const relative = dataset.files.map((file) => path.relative(root, file.path));
    assert.deepEqual(relative, [
      'empty.txt',
      'shard-link.tar',
      'train/cat/1.jpg',
      'train/cat/2.jpg',
      'train/dog/3.jpg',
      'val/deep/er/still/4.jpg',
    ]);
    assert.equal(dataset.bytes, 2000);
    assert.equal(dataset.meanFileBytes, 2000 / 6);
    assert.deepEqual(dataset.fileBytesQuantiles, { p10: 0, p50: 200, p90: 1000, max: 1000 });
    assert.equal(dataset.skippedEntries, 0);
    assert.equal(dataset.fitsInMemory, true);
    assert.deepEqual(dataset.roots, [root]);
  });

  it('lists the same files when the walk goes parallel', async () => {
    const root = path.join(dir, 'data');
    const sync = await listDataset([root], { readMeminfo: plentyOfMemory });
    const parallel = await listDataset([root], { readMeminfo: plentyOfMemory, slowStatMicros: 0, concurrency: 3 });
    assert.deepEqual(parallel.files, sync.files);
    assert.equal(parallel.files.length, 6);
  });

  it('lists the same files through fs.statSync as through statx', async () => {
    const root = path.join(dir, 'data');
    const statx = await listDataset([root], { readMeminfo: plentyOfMemory });
    const node = await listDataset([root], { readMeminfo: plentyOfMemory, nodeStat: true });
    assert.deepEqual(node.files, statx.files);
    assert.deepEqual(node.fileBytesQuantiles, statx.fileBytesQuantiles);
  });

  it("records each root's file system from mountinfo", async () => {
    const root = path.join(dir, 'data');
    const mountinfo = `22 1 254:0 / / rw - ext4 /dev/vda rw\n40 22 0:50 / ${dir} rw - tmpfs tmpfs rw\n`;
    const dataset = await listDataset([root], { readMeminfo: plentyOfMemory, readMountinfo: async () => mountinfo });
    assert.deepEqual(dataset.fileSystems, [{ root, mountPoint: dir, type: 'tmpfs', source: 'tmpfs', kind: 'memory' }]);
  });

  it('accepts a single file as a root and does not list a file twice', async () => {
    const file = path.join(dir, 'outside/shard.tar');
    const dataset = await listDataset([file, file, path.join(dir, 'outside')], { readMeminfo: plentyOfMemory });
    assert.deepEqual(dataset.files, [{ path: file, bytes: 1000 }]);
    assert.equal(dataset.bytes, 1000);
  });

  it('names the path and the fix for a missing root', async () => {
    const missing = path.join(dir, 'no-such-dir');
    await assert.rejects(listDataset([missing]), (error) =>
      assertUserError(
        error,
        `--data ${missing}: no such directory; pass the folder that holds the training files`,
        INPUT_EXIT_CODE,
      ),
    );
  });

  it('rejects a root with no data, naming the flag given', async () => {
    const empty = path.join(dir, 'nothing');
    await assert.rejects(listDataset([path.join(dir, 'data'), empty], { flag: '--dataset' }), (error) =>
      assertUserError(
        error,
        new RegExp(`^--dataset ${empty}: no non-empty regular files found; pass`),
        INPUT_EXIT_CODE,
      ),
    );
    await assert.rejects(listDataset([]), (error) => assertUserError(error, /^--data is empty/, INPUT_EXIT_CODE));
  });

  it('says a dataset larger than the memory budget does not fit', async () => {
    const tiny = async (): Promise<string> => 'MemFree: 1 kB\nMemAvailable: 1 kB\n';
    const dataset = await listDataset([path.join(dir, 'data')], { readMeminfo: tiny });
    assert.equal(dataset.fitsInMemory, false);
    assert.equal(dataset.memoryBudgetBytes, Math.floor(1024 * 0.9));
  });

  it('finds the block device of the root on this machine', async (t) => {
    // tmpfs or overlay have none: then there is nothing to find, and the test says so.
    const expected = expectedWholeDisk(path.join(dir, 'data'));
    if ('skip' in expected) return t.skip(expected.skip);
    const dataset = await listDataset([path.join(dir, 'data')], { readMeminfo: plentyOfMemory });
    assert.equal(dataset.device, expected.device);
  });
});

describe('fileBytesQuantiles', () => {
  it('takes nearest-rank quantiles', () => {
    assert.deepEqual(fileBytesQuantiles([10, 9, 8, 7, 6, 5, 4, 3, 2, 1]), { p10: 1, p50: 5, p90: 9, max: 10 });
    assert.deepEqual(fileBytesQuantiles([42]), { p10: 42, p50: 42, p90: 42, max: 42 });
    assert.deepEqual(fileBytesQuantiles([]), { p10: 0, p50: 0, p90: 0, max: 0 });
    // Numeric, not lexicographic, order.
    assert.deepEqual(fileBytesQuantiles([100, 20, 3]), { p10: 3, p50: 20, p90: 100, max: 100 });
  });
});

describe('memoryBudget', () => {
  it('is 90% of MemAvailable, without adding Cached a second time', async () => {
    const meminfo = 'MemFree: 1000 kB\nMemAvailable: 2000 kB\nCached: 5000 kB\n';
    assert.equal(await memoryBudget(async () => meminfo), Math.floor(2000 * 1024 * 0.9));
  });
  it('falls back to MemFree + Cached on old kernels, and to null when unreadable', async () => {
    assert.equal(await memoryBudget(async () => 'MemFree: 1000 kB\nCached: 1000 kB\n'), Math.floor(2000 * 1024 * 0.9));
    assert.equal(await memoryBudget(async () => 'nothing useful'), null);
    assert.equal(
      await memoryBudget(async () => {
        throw new Error('ENOENT');
      }),
      null,
    );
  });
});
