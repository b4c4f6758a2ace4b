import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseMountinfo } from '../../../src/system/kernel/mountinfo.js';

const MOUNTINFO = [
  '27 1 254:0 / / rw,relatime - ext4 /dev/vda rw',
  '35 31 0:32 /docker/abc /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory',
  '38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio',
  '42 27 0:39 / /mnt/with\\040space rw - ext4 /dev/vdb rw',
  'garbage line',
  '1 2 3 - no-fixed-fields x rw',
].join('\n');

test('parseMountinfo: root, mount point, type, source, mount and super options, escapes undone, malformed lines skipped', () => {
  const mounts = parseMountinfo(MOUNTINFO);
  assert.equal(mounts.length, 4);
  assert.deepEqual(mounts[1], {
    root: '/docker/abc',
    mountPoint: '/sys/fs/cgroup/memory',
    type: 'cgroup',
    source: 'cgroup',
    mountOptions: ['rw', 'relatime'],
    superOptions: ['rw', 'memory'],
  });
  assert.deepEqual(mounts[2].superOptions, ['rw', 'blkio']);
  assert.equal(mounts[3].mountPoint, '/mnt/with space');
});
