import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  fileSystemKind,
  fileSystemLimit,
  fileSystemWarnings,
  rootFileSystems,
} from '../../../src/system/dataset/file-systems.js';
import { mountOf, parseMountinfo } from '../../../src/system/kernel/mountinfo.js';

const MOUNTINFO = [
  '22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw',
  '30 22 0:25 / /dev/shm rw,nosuid,nodev shared:2 - tmpfs tmpfs rw',
  '31 22 0:40 / /mnt/nfs rw,relatime shared:3 - nfs4 server:/export rw,vers=4.2',
  '32 22 0:41 / /mnt/s3 rw,relatime shared:4 - fuse.s3fs s3fs rw,user_id=0',
  '33 22 0:42 / /var/lib/docker/overlay2/x/merged rw shared:5 - overlay overlay rw,lowerdir=/a',
  '34 31 0:43 / /mnt/nfs/local\\040disk rw shared:6 - xfs /dev/sdb1 rw',
  'garbage line',
].join('\n');

describe('file systems of the dataset', () => {
  it('parses mountinfo and finds the mount holding a path (the longest prefix, escapes undone)', () => {
    const mounts = parseMountinfo(MOUNTINFO);
    assert.equal(mounts.length, 6);
    assert.equal(mountOf(mounts, '/home/u/data')?.type, 'ext4');
    assert.equal(mountOf(mounts, '/dev/shm/imagenet')?.type, 'tmpfs');
    assert.equal(mountOf(mounts, '/mnt/nfs/train/x.jpg')?.source, 'server:/export');
    assert.equal(mountOf(mounts, '/mnt/nfs/local disk/x')?.type, 'xfs');
    assert.equal(
      mountOf(mounts, '/mnt/nfsother')?.type,
      'ext4',
      'a prefix that is not a path component does not count',
    );
  });

  it('sorts file-system types into what they allow', () => {
    assert.deepEqual(
      [
        'ext4',
        'xfs',
        'tmpfs',
        'ramfs',
        'overlay',
        'nfs4',
        'cifs',
        '9p',
        'fuse.s3fs',
        'fuse.gcsfuse',
        'ceph',
        'squashfs',
      ].map(fileSystemKind),
      [
        'disk',
        'disk',
        'memory',
        'memory',
        'overlay',
        'network',
        'network',
        'network',
        'fuse',
        'fuse',
        'network',
        'other',
      ],
    );
  });

  it('names the limits: tmpfs and NFS have no provable cold mode, a FUSE file system proves neither cache mode', async () => {
    const read = async () => MOUNTINFO;
    const [shm] = await rootFileSystems(['/dev/shm'], read);
    assert.deepEqual(shm, { root: '/dev/shm', mountPoint: '/dev/shm', type: 'tmpfs', source: 'tmpfs', kind: 'memory' });
    const nfs = {
      root: '/mnt/nfs/train',
      mountPoint: '/mnt/nfs',
      type: 'nfs4',
      source: 'server:/export',
      kind: 'network' as const,
    };
    const disk = { ...nfs, type: 'ext4', kind: 'disk' as const };

    assert.match(fileSystemLimit('cold', [shm]) ?? '', /tmpfs at \/dev\/shm: its pages cannot be evicted/);
    assert.equal(fileSystemLimit('cached', [shm]), null);
    assert.equal(fileSystemLimit('cached', [nfs]), null);
    assert.match(
      fileSystemLimit('cold', [disk, nfs]) ?? '',
      /nfs4 \(server:\/export\): the server's cache cannot be evicted/,
    );
    const s3 = { root: '/mnt/s3', mountPoint: '/mnt/s3', type: 'fuse.s3fs', source: 's3fs', kind: 'fuse' as const };
    assert.match(fileSystemLimit('cached', [s3]) ?? '', /fuse\.s3fs \(s3fs\): a FUSE daemon does the reads/);
    assert.match(fileSystemLimit('cold', [s3]) ?? '', /read_bytes/);
    assert.equal(fileSystemLimit('synthetic', [nfs]), null);
    assert.equal(fileSystemLimit('cold', [disk]), null);
    assert.equal(fileSystemLimit('cold', undefined), null);

    const warnings = fileSystemWarnings([
      shm,
      nfs,
      disk,
      { ...disk, type: 'overlay', kind: 'overlay' },
      { ...disk, type: 'fuse.s3fs', kind: 'fuse' },
    ]);
    assert.equal(warnings.length, 4);
    assert.match(warnings[3], /a FUSE daemon does the reads/);
    assert.match(warnings[0], /^--data \/dev\/shm is on tmpfs .*copy the dataset to a disk/);
    assert.match(warnings[1], /^--data \/mnt\/nfs\/train is on nfs4 \(server:\/export at \/mnt\/nfs\)/);
    assert.match(warnings[2], /overlay.*no block device/);
  });

  it('leaves out roots it cannot resolve and answers nothing without mountinfo', async () => {
    assert.deepEqual(await rootFileSystems(['/no/such/dir'], async () => MOUNTINFO), []);
    assert.deepEqual(await rootFileSystems(['/'], async () => Promise.reject(new Error('EACCES'))), []);
  });
});
