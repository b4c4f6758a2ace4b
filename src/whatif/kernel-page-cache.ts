/**
 * Linux's page cache as the kernel runs it, simulated file by file: two lists with refault activation (mm/vmscan.c,
 * mm/swap.c, mm/workingset.c; the classic reclaim, where /sys/kernel/mm/lru_gen/enabled is absent or 0). Why exact LRU
 * is wrong here, and the rules simulated: docs/whatif.md, "Cache hit ratio".
 */
import { mixSeed, mulberry32, shuffledIndices } from '../random.js';
import { sum } from '../analysis/stats.js';

const NONE = 0;
const INACTIVE = 1;
const ACTIVE = 2;

/**
 * How stale reclaim's view of the lists is, in bytes evicted per refresh, as a share of the cache. The kernel balances
 * the lists by statistics it flushes now and then (memcg rstat), not by their live sizes: it keeps deactivating after
 * the inactive list has recovered, and the active list collapses and regrows in cycles of a few epochs (measured: a 20%
 * cache's active list grew 5, 11, 18, 24, 30 MB over five epochs and fell to 5 in the sixth). Fitted on one dataset
 * (the steady hit ratio within 0.03 of the measured one from 9% to 89% of it, where live sizes missed by up to 0.044 on
 * a dataset over 1 GiB) and checked on others (docs/results.md).
 */
export const STATS_REFRESH_SHARE = 0.2;

/** Hit bytes of each epoch, and of each part of it, from one simulated run at one cache size. */
export interface KernelEpochs {
  /** Per epoch: bytes read that hit, and bytes read. */
  epochs: { hitBytes: number; totalBytes: number; partHitBytes: number[]; partTotalBytes: number[] }[];
}

/** The simulation's options. */
export interface KernelCacheOptions {
  /**
   * Bytes of the file lists the cache belongs to, for the inactive ratio (the machine's, or the memory cgroup's), in
   * real bytes where the simulation is scaled down: the cache and otherActiveBytes when absent.
   */
  lruvecBytes?: number;
  /** Parts of an epoch whose hits are kept apart. */
  parts?: number;
  /**
   * Bytes of other file pages on the same active list that stay there (the job's mapped libraries, other programs' hot
   * files): they count when the kernel asks whether the inactive list is low, so the dataset's share of the active list
   * is deactivated sooner. 0 when absent.
   */
  otherActiveBytes?: number;
  /** Asked after each epoch with those so far: true ends the run early. */
  stop?: (epochs: KernelEpochs['epochs']) => boolean;
}

/** The inactive list's share of the file lists the kernel keeps: 1 : sqrt(10 x GiB) (inactive_is_low). */
export function inactiveRatio(lruvecBytes: number): number {
  const gib = Math.floor(lruvecBytes / 2 ** 30);
  return gib > 0 ? Math.floor(Math.sqrt(10 * gib)) : 1;
}

/**
 * Simulates `epochs` shuffled epochs over items of `sizesBytes` through a page cache of `cacheBytes` run by the
 * kernel's two lists; deterministic for a seed.
 */
export function simulateKernelEpochs(
  sizesBytes: ArrayLike<number>,
  cacheBytes: number,
  epochs: number,
  seed = 1,
  options: KernelCacheOptions = {},
): KernelEpochs {
  const n = sizesBytes.length;
  const parts = options.parts ?? 8;
  const other = options.otherActiveBytes ?? 0;
  const cache = new KernelCache(
    sizesBytes,
    cacheBytes,
    inactiveRatio(options.lruvecBytes ?? cacheBytes + other),
    other,
  );
  const order = new Int32Array(n);
  const out: KernelEpochs['epochs'] = [];
  for (let e = 0; e < epochs; e++) {
    shuffledIndices(order, mulberry32(mixSeed(seed, e)));
    const partHitBytes = new Array<number>(parts).fill(0);
    const partTotalBytes = new Array<number>(parts).fill(0);
    for (let part = 0; part < parts; part++) {
      let hits = 0;
      let total = 0;
      for (let j = Math.ceil((part * n) / parts); j < Math.ceil(((part + 1) * n) / parts); j++) {
        const item = order[j];
        total += sizesBytes[item];
        if (cache.read(item)) hits += sizesBytes[item];
      }
      partHitBytes[part] = hits;
      partTotalBytes[part] = total;
    }
    out.push({ hitBytes: sum(partHitBytes), totalBytes: sum(partTotalBytes), partHitBytes, partTotalBytes });
    if (options.stop?.(out)) break;
  }
  return { epochs: out };
}

/**
 * One page cache under the kernel's rules (the header's list), item by item: a class, not closures, so that the
 * optimised loop calls one target in every simulation of a whatif (new closures per call deoptimised it each time, and
 * the first whatif paid six times the steady cost).
 */
export class KernelCache {
  private readonly next: Int32Array;
  private readonly prev: Int32Array;
  private readonly on: Uint8Array;
  private readonly referenced: Uint8Array;
  private readonly shadow: Float64Array;
  /** Per list (NONE unused): its head (newest), tail (oldest) and bytes. */
  private readonly head = new Int32Array(3).fill(-1);
  private readonly tail = new Int32Array(3).fill(-1);
  private readonly bytes = new Float64Array(3);
  /** workingset's nonresident age: bytes evicted or activated so far. */
  private clock = 0;
  /**
   * What reclaim decides from: the lists' sizes and whether refaults were activated, as of the last refresh of the
   * statistics.
   */
  private refaultActivations = 0;
  private evictedSinceRefresh = Infinity;
  private seenInactive = 0;
  private seenActive = 0;
  private seenRefaultsActivated = false;
  private readonly refreshEvery: number;

  constructor(
    private readonly sizes: ArrayLike<number>,
    private readonly cacheBytes: number,
    private readonly ratio: number,
    /** Other file pages that stay on the active list (KernelCacheOptions.otherActiveBytes). */
    private readonly otherActive = 0,
  ) {
    const n = sizes.length;
    this.next = new Int32Array(n).fill(-1);
    this.prev = new Int32Array(n).fill(-1);
    this.on = new Uint8Array(n);
    this.referenced = new Uint8Array(n);
    this.shadow = new Float64Array(n).fill(-1);
    this.refreshEvery = STATS_REFRESH_SHARE * cacheBytes;
  }

  /** Where `item` is: on neither list (not cached), the inactive one, or the active one. */
  listOf(item: number): 'none' | 'inactive' | 'active' {
    return (['none', 'inactive', 'active'] as const)[this.on[item]];
  }

  /** Reads `item` whole: true on a hit. */
  read(item: number): boolean {
    const where = this.on[item];
    if (where !== NONE) {
      if (where === INACTIVE && this.referenced[item]) {
        this.remove(item);
        this.pushHead(ACTIVE, item);
        this.clock += this.sizes[item];
        this.referenced[item] = 0;
      } else {
        this.referenced[item] = 1;
      }
      return true;
    }
    const shadow = this.shadow[item];
    if (shadow >= 0 && this.clock - shadow <= this.bytes[ACTIVE]) {
      this.pushHead(ACTIVE, item);
      this.clock += this.sizes[item];
      this.refaultActivations++;
    } else {
      this.pushHead(INACTIVE, item);
    }
    this.referenced[item] = 1;
    this.reclaim();
    return false;
  }

  private reclaim(): void {
    const over = this.bytes[INACTIVE] + this.bytes[ACTIVE] - this.cacheBytes;
    if (over <= 0) return;
    const inactive = this.bytes[INACTIVE];
    const active = this.bytes[ACTIVE];
    if (this.evictedSinceRefresh >= this.refreshEvery) {
      this.seenInactive = inactive;
      this.seenActive = active + this.otherActive;
      this.seenRefaultsActivated = this.refaultActivations > 0;
      this.evictedSinceRefresh = 0;
      this.refaultActivations = 0;
    }
    const inactiveLow = this.seenInactive * this.ratio < this.seenActive;
    // New refault activations trigger one reclaim's deactivation (the kernel then snapshots the counter); nothing
    // inactive forces it (force_deactivate).
    const inactiveEmpty = this.tail[INACTIVE] < 0;
    const deactivate = inactiveLow || this.seenRefaultsActivated || inactiveEmpty;
    this.seenRefaultsActivated = false;
    // Both lists are scanned at one priority, each in proportion to its size: the active list's share of this reclaim.
    let toDeactivate = deactivate ? (inactiveEmpty ? active : (over * active) / inactive) : 0;
    let freed = 0;
    while (freed < over && this.tail[INACTIVE] >= 0) {
      const item = this.tail[INACTIVE];
      const size = this.sizes[item];
      this.remove(item);
      freed += size;
      this.evictedSinceRefresh += size;
      this.shadow[item] = this.clock;
      this.clock += size;
    }
    while (toDeactivate > 0 && this.tail[ACTIVE] >= 0) {
      const item = this.tail[ACTIVE];
      this.remove(item);
      this.pushHead(INACTIVE, item);
      toDeactivate -= this.sizes[item];
    }
    // Nothing was left to evict: what was deactivated is there now.
    if (freed < over && this.tail[INACTIVE] >= 0) this.reclaim();
  }

  private pushHead(list: number, item: number): void {
    const head = this.head[list];
    this.on[item] = list;
    this.prev[item] = -1;
    this.next[item] = head;
    if (head >= 0) this.prev[head] = item;
    else this.tail[list] = item;
    this.head[list] = item;
    this.bytes[list] += this.sizes[item];
  }

  private remove(item: number): void {
    const list = this.on[item];
    const p = this.prev[item];
    const q = this.next[item];
    if (p >= 0) this.next[p] = q;
    else this.head[list] = q;
    if (q >= 0) this.prev[q] = p;
    else this.tail[list] = p;
    // An emptied list holds 0 bytes exactly: sizes from a histogram are fractions, and their sums drift.
    this.bytes[list] = this.head[list] < 0 ? 0 : this.bytes[list] - this.sizes[item];
    this.on[item] = NONE;
  }
}
