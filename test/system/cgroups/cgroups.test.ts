import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { execa } from 'execa';
import { ExitCode, UserError } from '../../../src/errors.js';
import { wholeDiskDevice } from '../../../src/system/kernel/block-device.js';
import {
  createJobCgroup,
  detectCgroups,
  parseProcCgroup,
  wrapCommand,
  type CgroupInfo,
} from '../../../src/system/cgroups/cgroups.js';

const V1_MOUNTINFO = [
  '27 1 254:0 / / rw,relatime - ext4 /dev/vda rw',
  '31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
  '35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
  '38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio',
  '40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd',
  '41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
  '42 27 0:39 / /mnt/with\\040space rw - ext4 /dev/vdb rw',
].join('\n');

test('parseProcCgroup maps controllers to paths, v2 under the empty key', () => {
  const paths = parseProcCgroup('9:name=systemd:/\n7:blkio:/a\n2:cpu,cpuacct:/b\n0::/user.slice/x.scope\n');
  assert.equal(paths.get('blkio'), '/a');
  assert.equal(paths.get('cpuacct'), '/b');
  assert.equal(paths.get(''), '/user.slice/x.scope');
});

test('detectCgroups: hybrid v1 mounts count as v1; no mounts is none', () => {
  const v1 = detectCgroups({ mountinfo: V1_MOUNTINFO, procCgroup: '7:blkio:/\n0::/\n' });
  assert.equal(v1.version, 'v1');
  assert.equal(v1.controllers.io.version, 'v1');
  assert.equal(v1.controllers.io.parentDir, '/sys/fs/cgroup/blkio');
  const none = detectCgroups({ mountinfo: '27 1 254:0 / / rw - ext4 /dev/vda rw', procCgroup: '' });
  assert.equal(none.version, 'none');
  assert.equal(none.controllers.io.writable, false);
  assert.equal(none.controllers.memory.version, null);
});

test('createJobCgroup without cgroups or permission: UserError (Environment) naming cause and fix', () => {
  const none: CgroupInfo = detectCgroups({ mountinfo: '', procCgroup: '' });
  assert.throws(
    () => createJobCgroup({ name: 't', readBpsDevice: { device: '254:0', bytesPerSec: 1e6 }, cgroups: none }),
    (error: unknown) =>
      error instanceof UserError &&
      error.exitCode === ExitCode.Environment &&
      /run as root/.test(error.message) &&
      /--storage-bw/.test(error.message),
  );
  const readOnly: CgroupInfo = {
    version: 'v1',
    controllers: {
      io: {
        version: 'v1',
        writable: false,
        parentDir: '/sys/fs/cgroup/blkio',
        reason: 'the cgroup blkio controller at /sys/fs/cgroup/blkio is not writable by this user',
      },
      memory: { version: null, writable: false, parentDir: null, reason: 'absent' },
      cpuset: { version: null, writable: false, parentDir: null, reason: 'absent' },
    },
  };
  assert.throws(
    () => createJobCgroup({ name: 't', readBpsDevice: { device: '254:0', bytesPerSec: 1e6 }, cgroups: readOnly }),
    /not writable by this user; run as root/,
  );
  assert.throws(() => createJobCgroup({ name: '../x', cgroups: readOnly }), /invalid cgroup name/);
  assert.throws(
    () => createJobCgroup({ name: 'x', readBpsDevice: { device: 'vda', bytesPerSec: 1 }, cgroups: readOnly }),
    /major:minor/,
  );
});

test('wrapCommand passes user arguments verbatim, never through the script text', async () => {
  const args = ['a b', '$(touch /nonexistent-dsa)', '"q"', "'", '--', '; exit 3'];
  const argv = wrapCommand([], [process.execPath, '-e', 'console.log(JSON.stringify(process.argv.slice(1)))', ...args]);
  assert.equal(argv[0], 'sh');
  assert.ok(!argv[2].includes('a b'));
  const result = await execa(argv[0], argv.slice(1));
  assert.deepEqual(JSON.parse(result.stdout), args);
  assert.throws(() => wrapCommand([], []), UserError);
});

test('wrapCommand fails the job (126) instead of running it unthrottled when a group cannot be joined', async () => {
  const argv = wrapCommand(['/nonexistent/dir/cgroup.procs'], ['echo', 'ran']);
  const result = await execa(argv[0], argv.slice(1), { reject: false });
  assert.equal(result.exitCode, 126);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, /cannot join cgroup/);
});

test('a throttled group slows buffered reads of a cold 20 MB file to 10 MB/s', async (t) => {
  const info = detectCgroups();
  const root = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'dsa-throttle-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const device = await wholeDiskDevice(dir);
  if (!root || !info.controllers.io.writable || !device) {
    t.skip(
      `needs root and a writable cgroup blkio/io controller and a block device for ${dir}: ${root ? '' : 'not root; '}${info.controllers.io.reason}; device ${device}`,
    );
    return;
  }
  // Random data (no holes, which would read without I/O), flushed so eviction can drop it.
  const file = join(dir, 'data.bin');
  const fd = openSync(file, 'w');
  for (let i = 0; i < 20; i++) writeSync(fd, randomBytes(1 << 20));
  fsyncSync(fd);
  closeSync(fd);
  // GNU dd with iflag=nocache and count=0 drops the whole file from the page cache.
  execFileSync('dd', [`if=${file}`, 'iflag=nocache', 'count=0'], { stdio: 'ignore' });

  const group = createJobCgroup({
    name: `test-${process.pid}`,
    readBpsDevice: { device, bytesPerSec: 10_000_000 },
    cgroups: info,
  });
  t.after(() => group.remove({ timeoutMs: 5000 }).catch(() => undefined));
  assert.ok(group.procsFiles.length >= 1);
  const argv = wrapCommand(group.procsFiles, ['sh', '-c', 'cat "$1" > /dev/null', 'sh', file]);
  const started = Date.now();
  await execa(argv[0], argv.slice(1));
  const seconds = (Date.now() - started) / 1000;
  assert.ok(seconds >= 1.5, `20 MB at 10 MB/s took only ${seconds.toFixed(2)} s`);

  await group.remove({ timeoutMs: 5000 });
  for (const groupDir of group.dirs) assert.equal(existsSync(groupDir), false, `${groupDir} removed`);
  await group.remove(); // already gone: no error
});

test('cgroup v2 (fake tree): picks a parent that can enable io, writes subtree_control and io.max', async (t) => {
  const { mkdirSync, readFileSync, writeFileSync } = await import('node:fs');
  const mount = mkdtempSync(join(tmpdir(), 'dsa-cg2-'));
  t.after(() => rmSync(mount, { recursive: true, force: true }));
  const group = (path: string, files: Record<string, string>): void => {
    mkdirSync(join(mount, path), { recursive: true });
    for (const [name, text] of Object.entries(files)) writeFileSync(join(mount, path, name), text);
  };
  // Root offers io and memory; /user.slice is a delegated parent with io enabled;
  // our own group /user.slice/job.scope holds processes (the no-internal-process rule).
  group('.', {
    'cgroup.controllers': 'cpuset io memory pids\n',
    'cgroup.subtree_control': 'io memory\n',
    'cgroup.procs': '1\n',
  });
  group('user.slice', {
    'cgroup.controllers': 'io memory\n',
    'cgroup.subtree_control': 'memory\n',
    'cgroup.procs': '',
    'cgroup.type': 'domain\n',
  });
  group('user.slice/job.scope', {
    'cgroup.controllers': 'io memory\n',
    'cgroup.subtree_control': '',
    'cgroup.procs': '4242\n',
    'cgroup.type': 'domain\n',
  });
  const info = detectCgroups({
    mountinfo: `41 31 0:38 / ${mount} rw,relatime - cgroup2 cgroup2 rw`,
    procCgroup: '0::/user.slice/job.scope\n',
    v2Parent: '',
  });
  assert.equal(info.version, 'v2');
  if (process.getuid?.() !== 0) {
    t.skip('the rest writes a fake tree as root would');
    return;
  }
  assert.equal(info.controllers.io.parentDir, join(mount, 'user.slice'));
  assert.equal(info.controllers.cpuset.writable, false);
  assert.match(info.controllers.cpuset.reason, /does not offer cpuset/);
  const job = createJobCgroup({
    name: 'v2',
    readBpsDevice: { device: '8:0', bytesPerSec: 5e7 },
    memoryLimitBytes: 1e9,
    cgroups: info,
  });
  const dir = join(mount, 'user.slice', 'ds-analyzer-v2');
  assert.deepEqual(job.dirs, [dir]);
  assert.deepEqual(job.procsFiles, [join(dir, 'cgroup.procs')]);
  assert.equal(readFileSync(join(mount, 'user.slice', 'cgroup.subtree_control'), 'utf8'), '+io');
  assert.equal(readFileSync(join(dir, 'io.max'), 'utf8'), '8:0 rbps=50000000');
  assert.equal(readFileSync(join(dir, 'memory.max'), 'utf8'), '1000000000');
});
