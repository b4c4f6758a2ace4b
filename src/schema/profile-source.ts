// The data a profile ran on, read the same way from every profile: its
// `source` where it has one, else derived from the fields older profiles
// spread it over (options.data, options.remote, options.dropCaches, dataset.mount). Types only: whatif and gate read
// sealed profiles without loading zod (docs/architecture.md).
import type { DataSourceRecord, Profile } from './profile.js';

/** The profile's data source record: its own, or for an older profile the one its old fields describe. */
export function sourceOfProfile(profile: Pick<Profile, 'source' | 'options' | 'dataset'>): DataSourceRecord {
  if (profile.source) return profile.source;
  const { options, dataset } = profile;
  if (options.remote) {
    const { url, endpoint, jobCache, netMeter } = options.remote;
    // Older profiles counted every request at the proxy (docs/json-output.md, options.remote.netMeter).
    return { kind: 'remote', url, endpoint, jobCache: jobCache ?? null, netMeter: netMeter ?? 'proxy' };
  }
  // A FUSE mount was recorded only where its daemon was metered; any other was profiled as files.
  if (dataset.mount) return { kind: 'fuse', roots: options.data, dropCaches: options.dropCaches, mount: dataset.mount };
  return { kind: 'files', roots: options.data, dropCaches: options.dropCaches };
}

/** Where a profile's uncached bytes came from, as its source wrote it; for an older profile, as its kind says. */
export function fetchPlace(profile: Pick<Profile, 'dataset' | 'source' | 'options'>): 'network' | 'storage' {
  const source = sourceOfProfile(profile);
  if (source.fetchesFrom) return source.fetchesFrom;
  // An unmetered FUSE mount was profiled as files (its meter was read_bytes); NFS and remote data came over the network.
  const network =
    source.kind === 'remote' || source.kind === 'nfs' || (source.kind === 'fuse' && source.mount !== null);
  return network ? 'network' : 'storage';
}
