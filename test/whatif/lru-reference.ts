/**
 * A plain LRU cache simulator for one cache size, the reference the one-pass
 * stack-distance curve is tested and benchmarked against. Variable-size items:
 * on a miss the item is inserted at the top and least-recently-used items are
 * evicted until the total fits. An item larger than the cache passes through
 * it (reading it evicts everything, as a big file does to the page cache) and
 * is not kept. A doubly linked recency list in typed arrays: O(1) per access.
 */

/** Bytes-weighted hits of `trace` through an LRU cache of `cacheBytes`, per epoch of `epochLength` accesses. */
export function simulateLru(
  trace: ArrayLike<number>,
  sizesBytes: ArrayLike<number>,
  cacheBytes: number,
  epochLength = trace.length,
): { hitBytes: number[]; totalBytes: number[] } {
  const items = sizesBytes.length;
  const NONE = -1;
  const prev = new Int32Array(items).fill(NONE); // towards the most recent
  const next = new Int32Array(items).fill(NONE); // towards the least recent
  const cached = new Uint8Array(items);
  let head = NONE; // most recent
  let tail = NONE; // least recent
  let used = 0;
  const unlink = (x: number): void => {
    if (prev[x] !== NONE) next[prev[x]] = next[x];
    else head = next[x];
    if (next[x] !== NONE) prev[next[x]] = prev[x];
    else tail = prev[x];
    prev[x] = next[x] = NONE;
  };
  const pushFront = (x: number): void => {
    next[x] = head;
    prev[x] = NONE;
    if (head !== NONE) prev[head] = x;
    head = x;
    if (tail === NONE) tail = x;
  };
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
    if (cached[item]) {
      hitBytes[epoch] += size;
      unlink(item);
      pushFront(item);
      continue;
    }
    pushFront(item);
    cached[item] = 1;
    used += size;
    while (used > cacheBytes && tail !== NONE) {
      const victim = tail;
      unlink(victim);
      cached[victim] = 0;
      used -= sizesBytes[victim];
    }
  }
  return { hitBytes, totalBytes };
}
