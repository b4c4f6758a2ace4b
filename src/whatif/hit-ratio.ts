/**
 * Cache hit ratios for every cache size at once, under exact LRU of files (where it is the policy: docs/whatif.md,
 * "Cache hit ratio") and for a cache that never evicts. Under LRU an item is resident at its next access iff its *byte
 * stack distance* -- its own size plus the sizes of the distinct items accessed since its previous access -- is at most
 * the cache size M: that quantity only grows until the item is touched again, and LRU evicts from the bottom of the
 * recency stack until the newcomer fits, so the content is always the stack prefix that fits. One pass over the access
 * sequence therefore gives the hit ratio for every M (Mattson, Gecsei, Slutz, Traiger, "Evaluation techniques for
 * storage hierarchies", IBM Systems Journal 9(2), 1970). The distance is a range sum over a Fenwick tree indexed by
 * access time (Bennett & Kruskal 1975; Almasi et al. 2002), O(log n) per access.
 *
 * A cache that never evicts (CoorDL's MinIO cache) hits with probability min(1, M/D) from the second epoch on.
 */
import { mixSeed, mulberry32, shuffledIndices } from '../random.js';
import { sum } from '../analysis/stats.js';

/**
 * Most bins of a distance histogram. Distances are binned by ceil(d / w) with w = max(1 byte, largest distance /
 * (MAX_BINS - 1)): exact to the byte for datasets up to 64 KiB, and within 1/65535 of the dataset beyond, below what
 * any cache-size question can tell apart. Binning replaces a sort of millions of distances by one pass, and 512 KiB of
 * bins stay in the CPU cache.
 */
export const MAX_BINS = 1 << 16;

/** Hit bytes of one epoch for every cache size: a cumulative histogram of byte stack distances. */
export interface EpochDistances {
  /**
   * The cumulative histogram: bytes of the accesses whose distance d has ceil(d / binBytes) <= k, for bin k (read it
   * with cumBytesAt).
   */
  cumBytes: CumulativeBytes;
  /** Bytes of all accesses of the epoch (first references included). */
  totalBytes: number;
  /**
   * The same per eighth of the epoch, in order (simulateLruEpochs only): under LRU the hits of an epoch come early and
   * its misses late.
   */
  parts?: EpochDistances[];
  /** Bin width of this histogram when it differs from the curve's (the coarser parts). */
  binBytes?: number;
}

/**
 * A cumulative histogram over `bins` bins, dense (every bin's running sum) or, when few bins were added to, its steps:
 * the running sum changes only at `steps` (ascending), to `stepBytes`; below the first it is 0. Either way the last bin
 * holds the exact total of the hits, `lastBytes`.
 */
export type CumulativeBytes =
  | { bins: number; dense: Float64Array }
  | { bins: number; steps: Int32Array; stepBytes: Float64Array; lastBytes: number };

/** Bytes of a cumulative histogram up to bin k (0 <= k < bins). */
export function cumBytesAt(cum: CumulativeBytes, k: number): number {
  if ('dense' in cum) return cum.dense[k];
  if (k === cum.bins - 1) return cum.lastBytes;
  // The last step at or below k.
  let low = 0;
  let high = cum.steps.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (cum.steps[mid] <= k) low = mid + 1;
    else high = mid;
  }
  return low === 0 ? 0 : cum.stepBytes[low - 1];
}

/**
 * Parts are binned this much coarser than the whole epoch: their ratios need no finer sizes, and 8 full histograms per
 * epoch cost a third more time.
 */
const PART_BIN_FACTOR = 16;

/** Parts of an epoch whose hit ratios are kept apart. */
export const EPOCH_PARTS = 8;

/** The LRU hit-ratio curve of a simulated run: per epoch, for every cache size. */
export interface HitRatioCurve {
  /** Items (files) in the simulated dataset. */
  items: number;
  /** Bytes of the simulated dataset. */
  datasetBytes: number;
  /** Width of a distance bin, bytes (the same for every epoch). */
  binBytes: number;
  /** Per epoch, in order; epoch 0 is the first (cold) one. */
  epochs: EpochDistances[];
}

/**
 * Simulates `epochs` epochs, each a fresh uniform random permutation of the items (what a shuffling DataLoader or
 * DistributedSampler does), and returns the per-epoch curve. Deterministic for a seed; `traceOut` (length items x
 * epochs), when given, receives the item order simulated.
 *
 * Permutations allow a cheaper pass than the general one: every item of epoch e was last read in epoch e-1, at position
 * i. Its distance at position j is its size plus the bytes of A u B, with A the items after i in epoch e-1 and B the
 * items before j in epoch e. |A| is a prefix sum, and |B| - |A n B| (the items of B read at or before i in epoch e-1)
 * is one Fenwick query over previous positions, with one update per access: a tree of n items instead of one over the
 * whole trace, and a third of the walks. A fresh permutation of the items is the same as a fresh permutation of their
 * previous positions, so the epoch is drawn as the latter and per-position data is read through it (one random read per
 * access instead of three).
 */
export function simulateLruEpochs(
  sizesBytes: ArrayLike<number>,
  epochs: number,
  seed = 1,
  traceOut?: Int32Array,
): HitRatioCurve {
  const n = sizesBytes.length;
  const datasetBytes = sum(sizesBytes);
  const binBytes = binWidth(datasetBytes);
  const positions = new Int32Array(n); // epoch e: previous position of the item read at j
  let itemAt = new Int32Array(n).map((_, i) => i); // item at each position of the previous epoch
  let nextItemAt = new Int32Array(n);
  // Per previous position, interleaved for locality: [bytes of positions < i, size at i].
  let byPosition = new Float64Array(2 * n);
  let nextByPosition = new Float64Array(2 * n);
  for (let i = 0, prefix = 0; i < n; i++) {
    byPosition[2 * i] = prefix;
    byPosition[2 * i + 1] = sizesBytes[i];
    prefix += sizesBytes[i];
  }
  const tree = new Float64Array(n + 1);
  const out: EpochDistances[] = [];
  for (let e = 0; e < epochs; e++) {
    shuffledIndices(positions, mulberry32(mixSeed(seed, e)));
    const histogram = new Histogram(binBytes, datasetBytes, n <= MAX_TOUCHED);
    const parts =
      e === 0 ? [] : Histogram.several(EPOCH_PARTS, binBytes * PART_BIN_FACTOR, datasetBytes, n <= MAX_TOUCHED);
    tree.fill(0);
    let prefix = 0;
    for (let j = 0; j < n; j++) {
      const i = positions[j];
      const size = byPosition[2 * i + 1];
      if (e === 0) {
        histogram.add(Infinity, size);
      } else {
        let readBefore = 0; // bytes of B read at or before i in the previous epoch: |B| - |A n B|
        for (let k = i + 1; k > 0; k -= k & -k) readBefore += tree[k];
        const after = datasetBytes - byPosition[2 * i] - size; // |A|
        const bin = histogram.add(size + after + readBefore, size);
        // ceil(d / (16 w)) = ceil(ceil(d / w) / 16): the part's bin from the epoch's, without a second division.
        parts[Math.floor((j * EPOCH_PARTS) / n)].addToBin(Math.ceil(bin / PART_BIN_FACTOR), size);
        for (let k = i + 1; k <= n; k += k & -k) tree[k] += size;
      }
      nextByPosition[2 * j] = prefix;
      nextByPosition[2 * j + 1] = size;
      prefix += size;
      nextItemAt[j] = itemAt[i];
    }
    if (traceOut) traceOut.set(nextItemAt, e * n);
    // The first epoch is all first references: its parts would hold no hits.
    out.push({
      ...histogram.finish(),
      ...(e > 0 ? { parts: parts.map((p) => ({ ...p.finish(), binBytes: binBytes * PART_BIN_FACTOR })) } : {}),
    });
    [byPosition, nextByPosition] = [nextByPosition, byPosition];
    [itemAt, nextItemAt] = [nextItemAt, itemAt];
  }
  return { items: n, datasetBytes, binBytes, epochs: out };
}

/** Bins of a histogram of distances up to `maxDistance`, `binBytes` wide. */
function binCount(binBytes: number, maxDistance: number): number {
  return Math.min(MAX_BINS, Math.ceil(maxDistance / binBytes) + 1);
}

/** Bytes per histogram bin for distances up to `maxDistance`. */
function binWidth(maxDistance: number): number {
  return Math.max(1, maxDistance / (MAX_BINS - 1));
}

/**
 * Most bins a histogram remembers as touched; with more, finish() makes the dense running sum of every bin. A small
 * dataset touches a few hundred bins of 65536 at most: its steps are all the curve needs, where the dense sum, in code
 * not yet optimised when the CLI starts, and the memory it fills were most of a whatif's own CPU time.
 */
const MAX_TOUCHED = 4096;

/** A histogram of hit bytes by distance bin, made cumulative at the end. */
class Histogram {
  private readonly bins: Float64Array;
  private total = 0;
  /** Bins added to, in the order first added, while `tracking`. */
  private readonly touched: number[] = [];
  /**
   * Whether `touched` lists every bin added to: asked by the maker, where at most MAX_TOUCHED accesses can hit (a large
   * dataset's adds then pay no more than a test of it); given up past MAX_TOUCHED bins.
   */
  private tracking: boolean;
  constructor(
    private readonly binBytes: number,
    maxDistance: number,
    tracking: boolean,
    bins?: Float64Array,
  ) {
    this.bins = bins ?? new Float64Array(binCount(binBytes, maxDistance));
    this.tracking = tracking;
  }
  /** `count` histograms alike, their bins in one allocation (many small typed arrays cost more than one). */
  static several(count: number, binBytes: number, maxDistance: number, tracking: boolean): Histogram[] {
    const bins = binCount(binBytes, maxDistance);
    const storage = new Float64Array(count * bins);
    return Array.from(
      { length: count },
      (_, i) => new Histogram(binBytes, maxDistance, tracking, storage.subarray(i * bins, (i + 1) * bins)),
    );
  }
  private finite = 0;
  /** Adds an access; returns the (unclamped) bin of its distance, or -1 for a first reference. */
  add(distance: number, size: number): number {
    this.total += size;
    if (distance === Infinity) return -1;
    this.finite += size;
    const bin = Math.ceil(distance / this.binBytes - 1e-9);
    this.addBytes(Math.min(this.bins.length - 1, bin), size);
    return bin;
  }
  /** Adds a hit whose bin is already known (a coarser copy of another histogram). */
  addToBin(bin: number, size: number): void {
    this.total += size;
    this.finite += size;
    this.addBytes(Math.min(this.bins.length - 1, bin), size);
  }
  private addBytes(bin: number, size: number): void {
    if (this.tracking && this.bins[bin] === 0) {
      // A bin may be listed twice (zero-byte items): finish() skips repeats.
      if (this.touched.length === MAX_TOUCHED) this.tracking = false;
      else this.touched.push(bin);
    }
    this.bins[bin] += size;
  }
  finish(): EpochDistances {
    const bins = this.bins;
    if (!this.tracking || bins.length === 0) {
      for (let k = 1; k < bins.length; k++) bins[k] += bins[k - 1];
      // Summed in the order of `total`, so a cache holding everything hits exactly 100%.
      if (bins.length > 0) bins[bins.length - 1] = this.finite;
      return { cumBytes: { bins: bins.length, dense: bins }, totalBytes: this.total };
    }
    // The same running sum, bin by bin, kept where it changes: an untouched bin holds 0, and running + 0 is running.
    const touched = Int32Array.from(this.touched).sort();
    const steps = new Int32Array(touched.length);
    const stepBytes = new Float64Array(touched.length);
    let count = 0;
    let running = 0;
    for (let i = 0; i < touched.length; i++) {
      const k = touched[i];
      if (count > 0 && k === steps[count - 1]) continue;
      running = k === 0 ? bins[0] : bins[k] + running;
      steps[count] = k;
      stepBytes[count++] = running;
    }
    return {
      cumBytes: {
        bins: bins.length,
        steps: steps.subarray(0, count),
        stepBytes: stepBytes.subarray(0, count),
        lastBytes: this.finite,
      },
      totalBytes: this.total,
    };
  }
}

/** Hit bytes of an epoch for a cache of `cacheBytes`. */
function hitBytes(curve: HitRatioCurve, epoch: EpochDistances, cacheBytes: number): number {
  const bins = epoch.cumBytes.bins;
  if (!(cacheBytes >= 0) || bins === 0) return 0;
  // No distance exceeds the dataset: a cache that holds it hits every re-reference, whatever the binning.
  if (cacheBytes >= curve.datasetBytes) return cumBytesAt(epoch.cumBytes, bins - 1);
  return cumBytesAt(
    epoch.cumBytes,
    Math.min(bins - 1, Math.floor(cacheBytes / (epoch.binBytes ?? curve.binBytes) + 1e-9)),
  );
}

/** Bytes-weighted LRU hit ratio of epoch `epoch` (0-based) for a cache of `cacheBytes`. */
export function lruHitRatio(curve: HitRatioCurve, cacheBytes: number, epoch: number): number {
  const e = curve.epochs[epoch];
  if (!e || e.totalBytes <= 0) return 0;
  return hitBytes(curve, e, cacheBytes) / e.totalBytes;
}

/**
 * Steady-state LRU hit ratio: over epochs 2.. (index >= 1). Every epoch after the first starts with the tail of the
 * previous permutation in the cache, so epochs 2, 3, ... are identically distributed; the first epoch of a fresh page
 * cache is all misses.
 */
export function steadyLruHitRatio(curve: HitRatioCurve, cacheBytes: number): number {
  let hits = 0;
  let total = 0;
  for (let e = 1; e < curve.epochs.length; e++) {
    hits += hitBytes(curve, curve.epochs[e], cacheBytes);
    total += curve.epochs[e].totalBytes;
  }
  return total > 0 ? hits / total : 0;
}

/** Steady-state LRU hit ratio of each part of an epoch (EPOCH_PARTS, in order), or null for a curve without parts. */
export function steadyLruHitRatioByPart(curve: HitRatioCurve, cacheBytes: number): number[] | null {
  const steady = curve.epochs.slice(1);
  if (steady.length === 0 || steady.some((e) => !e.parts)) return null;
  return Array.from({ length: EPOCH_PARTS }, (_, k) => {
    let hits = 0;
    let total = 0;
    for (const e of steady) {
      hits += hitBytes(curve, e.parts![k], cacheBytes);
      total += e.parts![k].totalBytes;
    }
    return total > 0 ? hits / total : 0;
  });
}

/**
 * Smallest cache size (to a bin) whose steady-state LRU hit ratio reaches `target` (0..1), or null when none does.
 *
 * The hit bytes of bin k, summed over the steady epochs, never fall as k grows below the last bin (each epoch's
 * cumBytes is a running sum, and rounding keeps order), so the first bin that reaches the target is found by bisection;
 * the last bin, set to the exact total rather than summed up to, is asked on its own, last, as the scan bin by bin
 * asked it.
 */
export function smallestLruCacheFor(curve: HitRatioCurve, target: number): number | null {
  if (target <= 0) return 0;
  const steady = curve.epochs.slice(1);
  const total = steady.reduce((a, e) => a + e.totalBytes, 0);
  if (total <= 0) return null;
  const bins = steady[0].cumBytes.bins;
  const reaches = (k: number) => {
    let hits = 0;
    for (const e of steady) hits += cumBytesAt(e.cumBytes, k);
    return hits / total >= target - 1e-12;
  };
  // The first k in [low, high) that reaches, else high.
  let low = 0;
  let high = bins - 1;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (reaches(mid)) high = mid;
    else low = mid + 1;
  }
  if (low < bins - 1) return low * curve.binBytes;
  return bins > 0 && reaches(bins - 1) ? (bins - 1) * curve.binBytes : null;
}

/**
 * Hit ratio of an application cache that never evicts (CoorDL's MinIO): it holds the first M bytes of the dataset it
 * saw, so under random access every epoch after the first hits min(1, M/D) of the bytes; the first epoch misses.
 */
export function minioHitRatio(cacheBytes: number, datasetBytes: number): number {
  if (datasetBytes <= 0) return 1;
  return Math.min(1, Math.max(0, cacheBytes / datasetBytes));
}
