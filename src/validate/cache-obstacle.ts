import type { Profile } from '../schema/profile.js';
import { detectCgroups } from '../system/cgroups/cgroups.js';
import { pageCacheSupport } from '../system/page-cache/page-cache.js';

/**
 * Why cache points cannot run on this machine, or null: the cap needs
 * per-file page-cache control and trustworthy mincore readings; a profile
 * whose cold mode throttled storage needs the same throttle (a writable
 * io/blkio cgroup; env's DSA_CGROUP_PARENT names a delegated one).
 */
export function cachePointObstacle(profile: Profile, env: NodeJS.ProcessEnv): string | null {
  const support = pageCacheSupport();
  if (!support.evict || !support.residency) return `the dataset's page cache cannot be capped and measured here (${support.reason})`;
  if (profile.options.storageBwBytesPerSec) {
    const io = detectCgroups({ v2Parent: env.DSA_CGROUP_PARENT }).controllers.io;
    if (!io.writable) return `the profile throttled storage (--storage-bw) and no writable io cgroup can do it again (${io.reason}); run as root, or re-profile without --storage-bw`;
  }
  return null;
}
