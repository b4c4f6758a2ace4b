/**
 * fetchPlace: where a profile's uncached bytes came from, as the texts name them, read from its data source record
 * (or the one an older profile's fields describe).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { fetchPlace } from '../../src/analysis/fetch-place.js';
import type { DataSourceRecord } from '../../src/schema/profile.js';
import { readProfile } from '../../src/store/profile-store.js';

const fixture = (name: string) =>
  readProfile(fileURLToPath(new URL(`../../../test/fixtures/profiles/${name}.json`, import.meta.url)));

test('older profiles: local files from storage, remote data over the network', () => {
  assert.equal(fetchPlace(fixture('emulated-quick')), 'storage');
  assert.equal(fetchPlace(fixture('remote-capped')), 'network');
});

test('a profile with its own source: NFS and a metered FUSE mount over the network, an unmetered one as files', () => {
  const profile = fixture('emulated-quick');
  const withSource = (source: DataSourceRecord) => fetchPlace({ ...profile, source });
  const nfs = { roots: ['/mnt/data'], dropCaches: false, type: 'nfs4', server: 'filer:/x', mountPoint: '/mnt' };
  assert.equal(withSource({ kind: 'nfs', ...nfs }), 'network');
  const daemon = { program: 's3fs', pid: 42, cgroup: '/s3fs', otherProcesses: 0 };
  const mount = { type: 'fuse.s3fs', source: 'bucket', mountPoint: '/mnt/s3', daemon };
  assert.equal(withSource({ kind: 'fuse', roots: ['/mnt/s3'], dropCaches: false, mount }), 'network');
  assert.equal(withSource({ kind: 'fuse', roots: ['/mnt/s3'], dropCaches: false, mount: null }), 'storage');
  assert.equal(withSource({ kind: 'files', roots: ['/data'], dropCaches: false }), 'storage');
});
