import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { execa } from 'execa';
import { detectCgroups, wrapCommand, type CgroupInfo } from '../../../src/system/cgroups/cgroups.js';
import { wholeDiskDevice } from '../../../src/system/kernel/block-device.js';
import { startWriteThrottle, writeThrottleObstacle } from '../../../src/system/cgroups/write-throttle.js';

/** A sysfs with these disks under block/. */
function fakeSysfs(root: string, disks: Record<string, string>): string {
  for (const [name, dev] of Object.entries(disks)) {
    mkdirSync(join(root, 'block', name), { recursive: true });
    writeFileSync(join(root, 'block', name, 'dev'), `${dev}\n`);
  }
  return root;
}

const asRoot = process.getuid?.() === 0;

test('cgroup v1 (fake tree): every disk but loop devices gets a write_bps_device line; the disks are named', {
  skip: asRoot ? false : 'writes a fake tree as root would',
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'dsa-wt-v1-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const blkio = join(dir, 'blkio');
  mkdirSync(blkio);
  const cgroups = detectCgroups({
    mountinfo: `38 31 0:35 / ${blkio} rw,relatime - cgroup cgroup rw,blkio`,
    procCgroup: '7:blkio:/\n',
  });
  const sysfs = fakeSysfs(join(dir, 'sys'), { vda: '254:0', loop3: '7:3' });
  assert.equal(writeThrottleObstacle({}, { sysfs, cgroups }), null);
  const held = startWriteThrottle(40e6, 'wt', {}, { sysfs, cgroups });
  assert.deepEqual(held.devices, ['vda (254:0)']);
  assert.equal(held.version, 'v1');
  assert.equal(
    readFileSync(join(blkio, 'ds-analyzer-wt', 'blkio.throttle.write_bps_device'), 'utf8'),
    '254:0 40000000',
  );
  // The job joins the throttled group before it runs: the cgroup join wrapper, with the group's procs file and the
  // command.
  assert.deepEqual(held.wrap(['true']), wrapCommand([join(blkio, 'ds-analyzer-wt', 'cgroup.procs')], ['true']));
});

test('cgroup v2 (fake tree): io.max gets wbps', {
  skip: asRoot ? false : 'writes a fake tree as root would',
}, async (t) => {
  const mount = mkdtempSync(join(tmpdir(), 'dsa-wt-v2-'));
  t.after(() => rmSync(mount, { recursive: true, force: true }));
  writeFileSync(join(mount, 'cgroup.controllers'), 'io memory\n');
  writeFileSync(join(mount, 'cgroup.subtree_control'), 'io\n');
  writeFileSync(join(mount, 'cgroup.procs'), '1\n');
  const cgroups = detectCgroups({
    mountinfo: `41 31 0:38 / ${mount} rw,relatime - cgroup2 cgroup2 rw`,
    procCgroup: '0::/\n',
  });
  const sysfs = fakeSysfs(join(mount, '..', `${mount.split('/').pop()}-sys`), { nvme0n1: '259:0' });
  t.after(() => rmSync(sysfs, { recursive: true, force: true }));
  const held = startWriteThrottle(20e6, 'wt2', {}, { sysfs, cgroups });
  assert.equal(held.version, 'v2');
  assert.equal(readFileSync(join(mount, 'ds-analyzer-wt2', 'io.max'), 'utf8'), '259:0 wbps=20000000');
});

test('why writes cannot be held: no writable io controller, or no disk to hold', () => {
  const none = detectCgroups({ mountinfo: '', procCgroup: '' });
  assert.match(writeThrottleObstacle({}, { cgroups: none })!, /not available/);
  const dir = mkdtempSync(join(tmpdir(), 'dsa-wt-none-'));
  try {
    const sysfs = fakeSysfs(dir, { loop0: '7:0', zram0: '252:0' });
    const writable = {
      version: 'v1',
      controllers: { io: { version: 'v1', writable: true, parentDir: dir, reason: '' } },
    } as unknown as CgroupInfo;
    assert.match(writeThrottleObstacle({}, { sysfs, cgroups: writable })!, /no disk in \/sys\/block to throttle/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('on this machine: 16 MB written and fsynced under a 8 MB/s write throttle take 2 s; the group is removed after', async (t) => {
  const obstacle = writeThrottleObstacle(process.env);
  if (!asRoot || obstacle)
    return t.skip(`needs root and a writable cgroup blkio/io controller: ${asRoot ? obstacle : 'not root'}`);
  const dir = mkdtempSync(join(tmpdir(), 'dsa-wt-real-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  if (!(await wholeDiskDevice(dir))) return t.skip(`${dir} is not on a disk (tmpfs?): nothing to throttle`);
  const held = startWriteThrottle(8e6, `test-${process.pid}`, process.env);
  try {
    const argv = held.wrap([
      'dd',
      'if=/dev/zero',
      `of=${join(dir, 'f.bin')}`,
      'bs=1M',
      'count=16',
      'conv=fsync',
      'status=none',
    ]);
    const started = Date.now();
    await execa(argv[0], argv.slice(1));
    const sec = (Date.now() - started) / 1000;
    t.diagnostic(`16 MiB fsynced in ${sec.toFixed(2)} s at 8 MB/s on ${held.devices.join(', ')}`);
    // 16 MiB at 8 MB/s is 2.1 s.
    assert.ok(sec >= 1.7, `16 MiB at 8 MB/s took only ${sec.toFixed(2)} s`);
  } finally {
    await held.remove();
  }
  const { controllers } = detectCgroups({ v2Parent: process.env.DSA_CGROUP_PARENT });
  assert.equal(existsSync(join(controllers.io.parentDir!, `ds-analyzer-test-${process.pid}`)), false, 'group removed');
});
