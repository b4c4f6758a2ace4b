import { test } from 'node:test';
import assert from 'node:assert/strict';
import { meterFuseMount, withoutCredentials } from '../../src/profile/data-sources/fuse-meter.js';
import type { RootFileSystem } from '../../src/system/dataset/file-systems.js';

const fuse: RootFileSystem = {
  root: '/mnt/s3/train',
  mountPoint: '/mnt/s3',
  type: 'fuse.s3fs',
  source: 's3fs',
  kind: 'fuse',
};
const disk: RootFileSystem = { root: '/data', mountPoint: '/', type: 'ext4', source: '/dev/vda1', kind: 'disk' };

test('a mount source keeps no user:password@ part', () => {
  assert.equal(withoutCredentials('https://AKIA123:s3cr3t@minio.local:9000/bucket'), 'https://minio.local:9000/bucket');
  assert.equal(withoutCredentials('alice:pw@host:/export'), 'host:/export');
  assert.equal(withoutCredentials('s3:data'), 's3:data', 'an rclone remote is not a credential');
});

test('FUSE metering is asked only for FUSE roots, and refused for a mix of mounts it cannot tell apart', async () => {
  assert.equal(await meterFuseMount([disk]), null);
  assert.equal(await meterFuseMount(undefined), null);
  assert.deepEqual(await meterFuseMount([fuse, disk]), {
    obstacle:
      'the --data roots mix a FUSE mount with other file systems, whose reads one meter cannot tell apart: profile them apart',
  });
  const other = { ...fuse, root: '/mnt/gcs/train', mountPoint: '/mnt/gcs' };
  assert.deepEqual(await meterFuseMount([fuse, other]), {
    obstacle: 'the --data roots are on more than one FUSE mount: profile one mount at a time',
  });
});

test('a FUSE mount whose daemon is not running cannot be metered, and says why', async () => {
  const result = await meterFuseMount([
    { ...fuse, mountPoint: `/nonexistent-mount-${process.pid}`, type: 'fuse.nonexistent-daemon' },
  ]);
  assert.ok(result && 'obstacle' in result);
  // Not root, no nftables, or no daemon: each is named.
  assert.match(
    result.obstacle,
    /needs root|nftables is not installed|no cgroup v2|no process holding \/dev\/fuse names \/nonexistent-mount/,
  );
});
