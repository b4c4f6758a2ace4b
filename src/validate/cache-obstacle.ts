import type { Profile } from '../schema/profile.js';
import { capObstacle } from '../profile/data-sources/cache-cap.js';
import type { OpenedSource } from '../profile/data-sources/data-source.js';
import { throttleObstacle } from '../profile/data-sources/throttle.js';

/**
 * Why cache points cannot run on this machine, or null: the cap needs per-file page-cache control and trustworthy
 * mincore readings; a profile whose cold mode throttled storage needs the same throttle (a writable io/blkio cgroup;
 * env's DSA_CGROUP_PARENT names a delegated one). The data source says what it can do.
 */
export function cachePointObstacle(
  profile: Profile,
  env: NodeJS.ProcessEnv,
  source: Pick<OpenedSource, 'cap' | 'throttle' | 'whyNot'>,
): string | null {
  const capping = capObstacle(source);
  if (capping !== null) return `the dataset's page cache cannot be capped and measured here (${capping})`;
  if (profile.options.storageBwBytesPerSec) {
    const throttle = throttleObstacle(source, env);
    if (throttle !== null)
      return (
        `the profile throttled storage (--storage-bw) and no writable io cgroup can do it again ` +
        `(${throttle}); run as root, or re-profile without --storage-bw`
      );
  }
  return null;
}
