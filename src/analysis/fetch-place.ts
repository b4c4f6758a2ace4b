// Where a profile's uncached bytes came from, as every text names them: remote data (metered by the proxy or the job's
// clients), files on a metered FUSE mount (at the daemon's sockets) and files on NFS come over the network; other files
// from storage. Read from the profile's data source record, so a new source names its place once, there.
import type { Profile } from '../schema/profile.js';
import { sourceOfProfile } from '../schema/profile-source.js';

/** 'network' for remote data, metered FUSE mounts and NFS; 'storage' for other files. */
export function fetchPlace(profile: Pick<Profile, 'dataset' | 'source' | 'options'>): 'network' | 'storage' {
  const source = sourceOfProfile(profile);
  switch (source.kind) {
    case 'remote':
    case 'nfs':
      return 'network';
    case 'fuse':
      // An unmetered FUSE mount was profiled as files (its meter was read_bytes).
      return source.mount !== null ? 'network' : 'storage';
    case 'files':
      return 'storage';
  }
}
