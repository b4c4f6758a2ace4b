/**
 * A plain LRU cache simulator for one cache size, the reference the one-pass
 * stack-distance curve is tested and benchmarked against. Variable-size items:
 * on a miss the item is inserted at the top and least-recently-used items are
 * evicted until the total fits. An item larger than the cache passes through
 * it (reading it evicts everything, as a big file does to the page cache) and
 * is not kept.
 */

/** Bytes-weighted hits of `trace` through an LRU cache of `cacheBytes`, per epoch of `epochLength` accesses. */
export function simulateLru(
  trace: ArrayLike<number>,
  sizesBytes: ArrayLike<number>,
  cacheBytes: number,
  epochLength = trace.length,
): { hitBytes: number[]; totalBytes: number[] } {
  // A Map iterates in insertion order: delete + set moves an item to the most-recent end.
  const cache = new Map<number, number>();
  let used = 0;
  const hitBytes: number[] = [];
  const totalBytes: number[] = [];
  for (let t = 0; t < trace.length; t++) {
    const epoch = Math.floor(t / epochLength);
    if (hitBytes.length <= epoch) {
      hitBytes.push(0);
      totalBytes.push(0);
    }
    const item = trace[t];
    const size = sizesBytes[item];
    totalBytes[epoch] += size;
    if (cache.has(item)) {
      hitBytes[epoch] += size;
      cache.delete(item);
      cache.set(item, size);
      continue;
    }
    cache.set(item, size);
    used += size;
    for (const [victim, victimSize] of cache) {
      if (used <= cacheBytes) break;
      cache.delete(victim);
      used -= victimSize;
    }
  }
  return { hitBytes, totalBytes };
}
