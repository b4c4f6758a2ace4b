/**
 * openDataSource: the file systems under the --data folders choose the
 * source (a FUSE mount its own, metered or not, NFS its own, any other local
 * files), and the NFS source, the seam's example, says where its bytes come
 * from and what limits its proofs; a profile's record opens its data again.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { MeteredFuseSource, UnmeteredFuseSource } from '../../src/profile/data-sources/fuse-files.js';
import { LocalFilesSource } from '../../src/profile/data-sources/local-files.js';
import { isOnNfs, NfsFilesSource } from '../../src/profile/data-sources/nfs-files.js';
import { dataSpecOf, openDataSource } from '../../src/profile/data-sources/open-data-source.js';
import { RemoteObjectsSource } from '../../src/profile/data-sources/remote-objects.js';
import { proveState } from '../../src/profile/state-proof.js';

/** A mountinfo with one file system of `type` mounted at /, so that it holds every folder. */
const rootMountedAs = (type: string, source: string) => () =>
  `22 1 0:21 / / rw,relatime shared:1 - ${type} ${source} rw\n`;

const files = (roots: string[]) => ({ kind: 'files' as const, roots, dropCaches: false });

test('the file system under the folders chooses the source: FUSE, NFS, or local files', () => {
  const roots = [tmpdir()];
  const open = (type: string, source: string) =>
    openDataSource(files(roots), { env: {}, readMountinfo: rootMountedAs(type, source) });
  // Metered where an s3fs daemon runs here (the only one of its program serves the mount), else local files.
  const fuse = open('fuse.s3fs', 's3fs');
  assert.ok(fuse instanceof MeteredFuseSource || fuse instanceof UnmeteredFuseSource);
  assert.ok(open('nfs4', 'filer:/export/data') instanceof NfsFilesSource);
  assert.ok(open('nfs', 'filer:/export/data') instanceof NfsFilesSource);
  const local = open('ext4', '/dev/vda1');
  assert.ok(
    local instanceof LocalFilesSource && !(local instanceof NfsFilesSource) && !(local instanceof UnmeteredFuseSource),
  );
  // cifs is a network file system too, but not NFS: read as local files, its limits said as before.
  const cifs = open('cifs', '//filer/data');
  assert.equal(cifs.constructor, LocalFilesSource);
});

test('roots on two NFS mounts are read as local files: the NFS record names one server and mount point', () => {
  const onMount = (root: string, mountPoint: string) => ({
    root,
    mountPoint,
    type: 'nfs4',
    source: `filer:${mountPoint}`,
    kind: 'network' as const,
  });
  assert.equal(isOnNfs([onMount('/a', '/mnt/a'), onMount('/a/b', '/mnt/a')]), true);
  assert.equal(isOnNfs([onMount('/a', '/mnt/a'), onMount('/b', '/mnt/b')]), false);
  assert.equal(isOnNfs([]), false);
});

test('the NFS source fetches over the network, records its mount, and cannot prove a cold mode past the server cache', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'dsa-nfs-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'a.bin'), Buffer.alloc(4096));
  const source = openDataSource(files([dir]), { env: {}, readMountinfo: rootMountedAs('nfs4', 'filer:/export/data') });
  const dataset = await source.list();
  assert.equal(dataset.files.length, 1);
  assert.deepEqual(dataset.source, {
    kind: 'nfs',
    fetchesFrom: 'network',
    roots: [dir],
    dropCaches: false,
    type: 'nfs4',
    server: 'filer:/export/data',
    mountPoint: '/',
  });
  // The listing records the file systems the source was chosen by (mountinfo is read once), and the proof's limit is
  // said on them.
  assert.deepEqual(
    dataset.fileSystems?.map((f) => [f.type, f.source]),
    [['nfs4', 'filer:/export/data']],
  );
  const onNfs = dataset;
  assert.match(
    source.proofLimit('cold', onNfs)!,
    /nfs4 \(filer:\/export\/data\): the server's cache cannot be evicted from here/,
  );
  assert.equal(source.proofLimit('cached', onNfs), null);
  assert.match(source.warnings(onNfs, ['cold']).join('\n'), /the server's own cache cannot be evicted from here/);
  // Its capabilities are local files': a throttle that asks for a block device, a cap, a held share, one launch.
  assert.ok(source.throttle && source.cap && source.heldShareState && source.oneLaunch);
  await assert.rejects(
    source.throttle.start({ ...onNfs, device: null }, 1e6, 'test', {}),
    /--storage-bw: the dataset is not on a block device/,
  );
  // Its proofs name the network, read_bytes being the NFS client's pages filled.
  const proof = proveState({
    mode: 'cold',
    residentBytesBefore: 0,
    datasetBytes: 100,
    readBytes: 95,
    readBytesSource: 'read_bytes',
    consumedBytes: 100,
    jobAcknowledgedMode: true,
    fitsInMemory: true,
    fetchesFrom: dataset.source?.fetchesFrom,
  });
  assert.match(proof.reason, /fetched over the network$/);
  await source.close();
});

test('a FUSE mount whose daemon cannot be metered is read as local files, recorded as FUSE, the reason in its proofs', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'dsa-fuse-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'a.bin'), Buffer.alloc(4096));
  const fileSystems = [{ root: dir, mountPoint: '/', type: 'fuse.s3fs', source: 's3fs', kind: 'fuse' as const }];
  const source = new UnmeteredFuseSource([dir], { dropCaches: false, fileSystems }, 'no daemon serves it');
  const dataset = await source.list();
  assert.deepEqual(dataset.source, {
    kind: 'fuse',
    fetchesFrom: 'storage',
    roots: [dir],
    dropCaches: false,
    mount: null,
  });
  assert.equal(dataset.mount, undefined);
  assert.match(source.warnings(dataset, ['cold']).at(-1)!, /^its daemon cannot be metered: no daemon serves it$/);
  assert.match(source.proofLimit('cold', dataset)!, /, and its daemon cannot be metered: no daemon serves it$/);
  assert.equal(source.oneLaunch.obstacle(dataset, ['cached', 'cold']), null, 'its modes can be blocks of one launch');
});

test("a profile's record opens its data again: folders as files, remote data named again without credentials", () => {
  const cacheDir = join(tmpdir(), 'dsa-validate-cache');
  assert.deepEqual(
    dataSpecOf(
      { kind: 'nfs', roots: ['/mnt/data'], dropCaches: true, type: 'nfs4', server: 'filer:/x', mountPoint: '/mnt' },
      {},
      cacheDir,
    ),
    files(['/mnt/data']),
  );
  const spec = dataSpecOf(
    { kind: 'remote', url: 's3://bucket/train', endpoint: 'http://127.0.0.1:9000', jobCache: null, netMeter: 'proxy' },
    {},
    cacheDir,
  );
  assert.equal(spec.kind, 'remote');
  assert.equal(spec.kind === 'remote' && spec.remote.display, 's3://bucket/train at http://127.0.0.1:9000');
  assert.ok(openDataSource(spec, { env: {} }) instanceof RemoteObjectsSource);
});
