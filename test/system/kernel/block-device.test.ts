import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { splitDev, wholeDiskDevice, wholeDisks } from '../../../src/system/kernel/block-device.js';
import { expectedWholeDisk } from './whole-disk.js';

describe('wholeDiskDevice', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsa-block-device-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('gives major:minor of the whole disk under a path, as mountinfo and /sys/block name it', async (t) => {
    const expected = expectedWholeDisk(dir);
    if ('skip' in expected) return t.skip(expected.skip);
    assert.equal(await wholeDiskDevice(dir), expected.device);
  });

  it('is null where there is no block device, or no path', async () => {
    assert.equal(await wholeDiskDevice('/proc'), null);
    assert.equal(await wholeDiskDevice('/nonexistent/x'), null);
  });

  it('maps a partition to its whole disk through sysfs', async () => {
    const { dev } = fs.statSync(dir, { bigint: true });
    const { major, minor } = splitDev(dev);
    const sysfs = path.join(dir, 'sys');
    const partition = path.join(sysfs, 'devices/virtual/block/disk0/disk0p1');
    fs.mkdirSync(partition, { recursive: true });
    fs.writeFileSync(path.join(partition, 'partition'), '1\n');
    fs.writeFileSync(path.join(partition, 'dev'), `${major}:${minor}\n`);
    fs.writeFileSync(path.join(sysfs, 'devices/virtual/block/disk0/dev'), '259:7\n');
    fs.mkdirSync(path.join(sysfs, 'dev/block'), { recursive: true });
    fs.symlinkSync('../../devices/virtual/block/disk0/disk0p1', path.join(sysfs, `dev/block/${major}:${minor}`));
    assert.equal(await wholeDiskDevice(dir, sysfs), '259:7');

    fs.rmSync(path.join(partition, 'partition'));
    assert.equal(await wholeDiskDevice(dir, sysfs), `${major}:${minor}`);
    assert.equal(await wholeDiskDevice(dir, path.join(dir, 'no-sysfs')), null);
  });
});

describe('splitDev', () => {
  it('decodes the glibc dev_t layout', () => {
    assert.deepEqual(splitDev(0xfe00n), { major: 254, minor: 0 });
    assert.deepEqual(splitDev(66305n), { major: 259, minor: 1 });
    // minor 300 spills into the high minor bits.
    assert.deepEqual(splitDev(1050668n), { major: 8, minor: 300 });
  });
});

describe('wholeDisks', () => {
  it('lists the disks of /sys/block with their major:minor, loop, RAM, zram, optical and floppy devices left out', (t) => {
    const sysfs = fs.mkdtempSync(path.join(os.tmpdir(), 'dsa-sysfs-'));
    t.after(() => fs.rmSync(sysfs, { recursive: true, force: true }));
    const disk = (name: string, dev: string | null): void => {
      fs.mkdirSync(path.join(sysfs, 'block', name), { recursive: true });
      if (dev !== null) fs.writeFileSync(path.join(sysfs, 'block', name, 'dev'), `${dev}\n`);
    };
    disk('vda', '254:0');
    disk('nvme0n1', '259:0');
    disk('dm-0', '253:1');
    disk('loop0', '7:0');
    disk('zram0', '252:0');
    disk('ram1', '1:1');
    disk('sr0', '11:0');
    disk('odd', null);
    assert.deepEqual(wholeDisks(sysfs), [
      { name: 'dm-0', device: '253:1' },
      { name: 'nvme0n1', device: '259:0' },
      { name: 'vda', device: '254:0' },
    ]);
    assert.deepEqual(wholeDisks(path.join(sysfs, 'none')), []);
  });

  it('on this machine: every entry is a disk with a dev number', () => {
    for (const d of wholeDisks()) assert.match(d.device, /^\d+:\d+$/, d.name);
  });
});
