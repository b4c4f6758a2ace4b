import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Slack above the job's own memory, so a burst of its allocations between two
 * calls does not meet the OOM killer (with 4 MiB + 1%, a Node.js job's heap
 * growth did, here). The cache the job may get grows by as much, so small
 * datasets validate poorly: the caller predicts at both ends.
 */
export function headroomBytes(nonCacheBytes: number): number {
  return 8 * 2 ** 20 + 0.1 * nonCacheBytes;
}

/**
 * Caps a job's page cache through its memory cgroup. A memory cgroup limits
 * everything the job charges, its own memory as well as the page cache of the
 * files it reads, so the limit follows the job: called at every poll, it sets
 * the limit to the largest non-cache usage seen so far (anonymous and kernel
 * memory) plus the cache to allow plus a headroom. The cache the job really
 * gets is therefore between cacheBytes and cacheBytes + headroom, and the
 * caller compares with predictions at both ends. (Turning the group's OOM
 * killer off instead makes reads fail with ENOMEM at the limit.)
 */
export function capPageCache(
  groupDirs: string[],
  cacheBytes: number,
  previousNonCacheBytes = 0,
): { limitBytes: number; nonCacheBytes: number; headroomBytes: number } {
  const v1 = groupDirs.find((dir) => existsSync(join(dir, 'memory.limit_in_bytes')));
  const v2 = groupDirs.find((dir) => existsSync(join(dir, 'memory.max')));
  const dir = v1 ?? v2;
  if (!dir) throw new Error('the job cgroup has no memory controller');
  const usage = Number(readFileSync(join(dir, v1 ? 'memory.usage_in_bytes' : 'memory.current'), 'utf8'));
  const stat = join(dir, 'memory.stat');
  const cache = (v1 ? (statField(stat, 'total_cache') ?? statField(stat, 'cache')) : statField(stat, 'file')) ?? 0;
  const nonCacheBytes = Math.max(previousNonCacheBytes, usage - cache);
  const headroom = headroomBytes(nonCacheBytes);
  const limitBytes = Math.round(nonCacheBytes + cacheBytes + headroom);
  writeFileSync(join(dir, v1 ? 'memory.limit_in_bytes' : 'memory.max'), String(limitBytes));
  return { limitBytes, nonCacheBytes, headroomBytes: headroom };
}

function statField(file: string, name: string): number | null {
  const match = new RegExp(`^${name} (\\d+)$`, 'm').exec(readFileSync(file, 'utf8'));
  return match ? Number(match[1]) : null;
}
