// Where a profile's uncached bytes came from, as every text names them:
// remote data (metered by the proxy) and files on a FUSE mount (metered at
// the daemon's sockets) come over the network; other files from storage.
import type { Profile } from '../schema/profile.js';

/** 'network' for remote data and metered FUSE mounts, 'storage' for local files. */
export function fetchPlace(profile: Pick<Profile, 'dataset'>): 'network' | 'storage' {
  return profile.dataset.remote || profile.dataset.mount ? 'network' : 'storage';
}
