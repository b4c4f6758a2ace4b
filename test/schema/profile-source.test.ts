/**
 * sourceOfProfile: a profile's data as one tagged value, its own `source`
 * where it has one, else derived from the fields older profiles spread it
 * over (options.data, options.remote, options.dropCaches, dataset.mount);
 * fetchPlace: where its uncached bytes came from, as its source wrote it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { readProfile } from '../../src/store/profile-store.js';
import { fetchPlace, sourceOfProfile } from '../../src/schema/profile-source.js';
import type { DataSourceRecord } from '../../src/schema/profile.js';

const fixture = (name: string) =>
  readProfile(fileURLToPath(new URL(`../../../test/fixtures/profiles/${name}.json`, import.meta.url)));

test('an older profile of local files reads as files, with its roots and drop_caches', () => {
  const profile = fixture('emulated-quick');
  assert.equal(profile.source, undefined, 'the fixture predates the field');
  assert.deepEqual(sourceOfProfile(profile), {
    kind: 'files',
    roots: profile.options.data,
    dropCaches: profile.options.dropCaches,
  });
});

test('an older profile of remote data reads as remote, counted at the proxy as it was', () => {
  const source = sourceOfProfile(fixture('remote-capped'));
  assert.deepEqual(source, {
    kind: 'remote',
    url: 's3://ds/train/',
    endpoint: 'http://127.0.0.1:4580',
    jobCache: null,
    netMeter: 'proxy',
  });
});

test("an older profile on a metered FUSE mount reads as fuse, with the mount; a profile's own source wins", () => {
  const profile = fixture('emulated-quick');
  const mount = {
    type: 'fuse.s3fs',
    source: 'bucket',
    mountPoint: '/mnt/s3',
    daemon: { program: 's3fs', pid: 42, cgroup: '/s3fs', otherProcesses: 0 },
  };
  const onFuse = { ...profile, dataset: { ...profile.dataset, mount } };
  assert.deepEqual(sourceOfProfile(onFuse), {
    kind: 'fuse',
    roots: profile.options.data,
    dropCaches: profile.options.dropCaches,
    mount,
  });
  const own = {
    kind: 'nfs' as const,
    roots: ['/mnt/data'],
    dropCaches: false,
    type: 'nfs4',
    server: 'filer:/x',
    mountPoint: '/mnt',
  };
  assert.deepEqual(sourceOfProfile({ ...onFuse, source: own }), own);
});

test('fetchPlace: older profiles, local files from storage and remote data over the network', () => {
  assert.equal(fetchPlace(fixture('emulated-quick')), 'storage');
  assert.equal(fetchPlace(fixture('remote-capped')), 'network');
});

test('fetchPlace: the place the source wrote, else NFS and a metered FUSE mount over the network, unmetered as files', () => {
  const profile = fixture('emulated-quick');
  const withSource = (source: DataSourceRecord) => fetchPlace({ ...profile, source });
  const nfs = { roots: ['/mnt/data'], dropCaches: false, type: 'nfs4', server: 'filer:/x', mountPoint: '/mnt' };
  assert.equal(withSource({ kind: 'nfs', ...nfs }), 'network');
  const daemon = { program: 's3fs', pid: 42, cgroup: '/s3fs', otherProcesses: 0 };
  const mount = { type: 'fuse.s3fs', source: 'bucket', mountPoint: '/mnt/s3', daemon };
  assert.equal(withSource({ kind: 'fuse', roots: ['/mnt/s3'], dropCaches: false, mount }), 'network');
  assert.equal(withSource({ kind: 'fuse', roots: ['/mnt/s3'], dropCaches: false, mount: null }), 'storage');
  assert.equal(withSource({ kind: 'files', roots: ['/data'], dropCaches: false }), 'storage');
  assert.equal(withSource({ kind: 'files', roots: ['/data'], dropCaches: false, fetchesFrom: 'network' }), 'network');
});
