/**
 * The page cache's steady hit ratio for every cache size, under the policy the what-if assumes: the kernel's two lists
 * (kernel-page-cache.ts), or exact LRU (hit-ratio.ts) where the cache is held by an LRU (validate's cap of closed
 * files) or the kernel runs a policy not modelled (the multi-generational LRU). One interface, so the model, the
 * recommendation and the sweep ask the same questions of either.
 */
import {
  EPOCH_PARTS,
  smallestLruCacheFor,
  steadyLruHitRatio,
  steadyLruHitRatioByPart,
  type HitRatioCurve,
} from './hit-ratio.js';
import { sum } from '../analysis/stats.js';
import { simulateKernelEpochs, type KernelCacheOptions } from './kernel-page-cache.js';

/** Which policy a curve simulates. */
export type PageCacheModel = 'linux-two-list' | 'exact-lru';

/** Steady-state hit ratios (the epochs after the first, bytes-weighted) by cache size, in the real dataset's bytes. */
export interface PageCacheCurve {
  /** The smallest cache that holds every file: the dataset's bytes, or more where files take whole pages. */
  wholeBytes: number;
  /** Steady hit ratio at a cache of `cacheBytes`. */
  steady(cacheBytes: number): number;
  /** The same per eighth of an epoch, in order; null where the curve has no parts. */
  steadyByPart(cacheBytes: number): number[] | null;
  /** Smallest cache whose steady hit ratio reaches `target`, or null when none does. */
  smallestFor(target: number): number | null;
}

/** Exact LRU over the simulated epochs of `curve`, whose bytes are `scale` times the real dataset's. */
export function lruPageCache(curve: HitRatioCurve, scale: number): PageCacheCurve {
  return {
    wholeBytes: curve.datasetBytes / scale,
    steady: (cacheBytes) => steadyLruHitRatio(curve, cacheBytes * scale),
    steadyByPart: (cacheBytes) => steadyLruHitRatioByPart(curve, cacheBytes * scale),
    smallestFor: (target) => {
      const simulated = smallestLruCacheFor(curve, target);
      return simulated === null ? null : simulated / scale;
    },
  };
}

/** Bytes of a page: the page cache's unit on x86-64 and most arm64 kernels. */
const PAGE_BYTES = 4096;

/**
 * Grid steps between an empty cache and one that holds the dataset: the kernel's curve is simulated at k / GRID_STEPS
 * of it.
 */
const GRID_STEPS = 20;
/** Epochs simulated per block; the run stops when a block's hit ratio is within CONVERGED of the block before. */
const BLOCK_EPOCHS = 4;
/** Most epochs simulated: a cache under a fifth of the dataset grows its active list 10-20 epochs before settling. */
const MAX_EPOCHS = 1 + 6 * BLOCK_EPOCHS;
const CONVERGED = 0.01;

/** The kernel's settled hit ratio at one cache size: the mean of the last block of epochs, and per part. */
interface SettledPoint {
  hit: number;
  byPart: number[];
}

/**
 * The kernel's two-list page cache (kernel-page-cache.ts) over `sizes` (a sample of the dataset's files, `scale` of
 * them per real byte; each takes whole pages of memory, so a cache of M holds less than M of the files), simulated at
 * every 5% of the dataset when a size between empty and whole is first asked, each until its hit ratio settles (the
 * active list of a small cache keeps growing for many epochs), and interpolated between. The grid is made monotone (a
 * running maximum): the simulation's noise, about 0.005, must not make more memory look slower. The file lists a cache
 * belongs to are the cache and `otherActiveBytes`, other file pages that stay on the active list (a machine's page
 * cache, or a memory cgroup's): their real size sets the inactive list's share.
 */
export function kernelPageCache(
  sizes: ArrayLike<number>,
  scale: number,
  seed = 1,
  otherActiveBytes = 0,
): PageCacheCurve {
  // The page cache holds whole pages: a file takes its size rounded up to them (2% more for 110 kB JPEGs, a third more
  // for 8 kB files).
  const pages = Float64Array.from(sizes, (size) => Math.ceil(size / PAGE_BYTES) * PAGE_BYTES);
  const simulatedBytes = sum(pages);
  // Memory of the real machine maps to the simulated one as the sample's bytes to the dataset's: `scale`.
  let grid: SettledPoint[] | null = null;
  const gridPoints = (): SettledPoint[] => {
    if (grid) return grid;
    grid = [{ hit: 0, byPart: new Array<number>(EPOCH_PARTS).fill(0) }];
    for (let k = 1; k < GRID_STEPS; k++) {
      const point = settle(pages, (k / GRID_STEPS) * simulatedBytes, seed, {
        otherActiveBytes: otherActiveBytes * scale,
        lruvecBytes: ((k / GRID_STEPS) * simulatedBytes) / scale + otherActiveBytes,
      });
      grid.push({ ...point, hit: Math.max(point.hit, grid[k - 1].hit) });
    }
    grid.push({ hit: 1, byPart: new Array<number>(EPOCH_PARTS).fill(1) });
    return grid;
  };
  /**
   * `read` of the grid at `cacheBytes`, mixed linearly between the points either side; an empty or whole cache needs no
   * simulation.
   */
  const interpolate = <T>(
    cacheBytes: number,
    read: (p: SettledPoint) => T,
    mix: (a: T, b: T, w: number) => T,
    empty: T,
    whole: T,
  ): T => {
    if (!(cacheBytes > 0)) return empty;
    if (cacheBytes * scale >= simulatedBytes) return whole;
    const points = gridPoints();
    const x = ((cacheBytes * scale) / simulatedBytes) * GRID_STEPS;
    const low = Math.floor(x);
    return x === low ? read(points[low]) : mix(read(points[low]), read(points[low + 1]), x - low);
  };
  const none = new Array<number>(EPOCH_PARTS).fill(0);
  const all = new Array<number>(EPOCH_PARTS).fill(1);
  return {
    wholeBytes: simulatedBytes / scale,
    steady: (cacheBytes) =>
      interpolate(
        cacheBytes,
        (p) => p.hit,
        (a, b, w) => a + (b - a) * w,
        0,
        1,
      ),
    steadyByPart: (cacheBytes) =>
      interpolate(
        cacheBytes,
        (p) => p.byPart,
        (a, b, w) => a.map((v, i) => v + (b[i] - v) * w),
        none,
        all,
      ),
    smallestFor: (target) => {
      if (target <= 0) return 0;
      if (target > 1) return null;
      const points = gridPoints();
      // The first grid point that reaches the target (the grid rises), then the size between it and the one before.
      const k = points.findIndex((p) => p.hit >= target - 1e-12);
      if (k <= 0) return 0;
      const below = points[k - 1].hit;
      const above = points[k].hit;
      const w = above > below ? (target - below) / (above - below) : 1;
      return ((k - 1 + Math.max(0, Math.min(1, w))) / GRID_STEPS) * (simulatedBytes / scale);
    },
  };
}

/** Simulates block after block of epochs at one cache size until the hit ratio settles. */
function settle(
  sizes: ArrayLike<number>,
  cacheBytes: number,
  seed: number,
  lists: Pick<KernelCacheOptions, 'otherActiveBytes' | 'lruvecBytes'>,
): SettledPoint {
  const run = simulateKernelEpochs(sizes, cacheBytes, MAX_EPOCHS, seed, {
    ...lists,
    parts: EPOCH_PARTS,
    stop: settledAfter,
  });
  const last = run.epochs.slice(-BLOCK_EPOCHS);
  return {
    hit: ratio(
      last,
      (e) => e.hitBytes,
      (e) => e.totalBytes,
    ),
    byPart: Array.from({ length: EPOCH_PARTS }, (_, k) =>
      ratio(
        last,
        (e) => e.partHitBytes[k],
        (e) => e.partTotalBytes[k],
      ),
    ),
  };
}

/** Whether the run may stop after `epochs` (index 0 cold): the last block within CONVERGED of the one before. */
function settledAfter(epochs: { hitBytes: number; totalBytes: number }[]): boolean {
  const warm = epochs.length - 1;
  if (warm < 2 * BLOCK_EPOCHS || warm % BLOCK_EPOCHS !== 0) return false;
  const block = (from: number) =>
    ratio(
      epochs.slice(from, from + BLOCK_EPOCHS),
      (e) => e.hitBytes,
      (e) => e.totalBytes,
    );
  return Math.abs(block(epochs.length - BLOCK_EPOCHS) - block(epochs.length - 2 * BLOCK_EPOCHS)) < CONVERGED;
}

function ratio<T>(items: T[], hits: (item: T) => number, totals: (item: T) => number): number {
  let h = 0;
  let t = 0;
  for (const item of items) {
    h += hits(item);
    t += totals(item);
  }
  return t > 0 ? h / t : 0;
}
