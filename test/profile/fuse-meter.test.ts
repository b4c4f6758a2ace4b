import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isOnFuse } from '../../src/profile/data-sources/fuse-files.js';
import { fuseMount, startSocketMeter, withoutCredentials } from '../../src/profile/data-sources/fuse-meter.js';
import type { SocketCounter } from '../../src/system/network/socket-counter.js';
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

test('FUSE metering is asked only for FUSE roots, and refused for a mix of mounts it cannot tell apart', () => {
  assert.equal(isOnFuse([disk]), false);
  assert.equal(isOnFuse([fuse, disk]), true);
  assert.deepEqual(fuseMount([fuse, disk]), {
    obstacle:
      'the --data roots mix a FUSE mount with other file systems, whose reads one meter cannot tell apart: profile them apart',
  });
  const other = { ...fuse, root: '/mnt/gcs/train', mountPoint: '/mnt/gcs' };
  assert.deepEqual(fuseMount([fuse, other]), {
    obstacle: 'the --data roots are on more than one FUSE mount: profile one mount at a time',
  });
});

test('a FUSE mount whose daemon is not running cannot be metered, and says why', () => {
  const result = fuseMount([
    { ...fuse, mountPoint: `/nonexistent-mount-${process.pid}`, type: 'fuse.nonexistent-daemon' },
  ]);
  assert.ok('obstacle' in result);
  // Not root, no nftables, or no daemon: each is named.
  assert.match(
    result.obstacle,
    /needs root|nftables is not installed|no cgroup v2|no process holding \/dev\/fuse names \/nonexistent-mount/,
  );
});

test("the daemon's payload estimate going back (a window of short packets) never takes the meter's bytes back", async () => {
  const payloads = [1000, 5000, 4990, 4980, 9000];
  let k = 0;
  const reading = () => {
    const payloadBytes = payloads[Math.min(k++, payloads.length - 1)];
    return { bytes: payloadBytes, packets: 0, payloadBytes };
  };
  const counter = { readNow: reading, read: async () => reading() } as unknown as SocketCounter;
  const meter = startSocketMeter(counter, { daemon: { program: 's3fs', pid: 1, cgroup: '/' } } as never);
  await new Promise((resolve) => setTimeout(resolve, 1700));
  const fetched = await meter.finish([]);
  const bytes = fetched.series.map((r) => r.bytes);
  assert.ok(bytes.length >= 4, `${bytes.length} readings`);
  assert.ok(
    bytes.every((b, i) => i === 0 || b >= bytes[i - 1]),
    `the readings never go down: ${bytes.join(', ')}`,
  );
  assert.equal(fetched.wholeRunBytes, 8000);
});
