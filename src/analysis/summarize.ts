/** Statistics of one rank's iteration series: warm-up removal, then batch means over whole delivery periods. */
import type { Iteration, IterationSummary } from '../schema/profile.js';
import { batchMeans, median } from './stats.js';
import { detectWarmup } from './warmup.js';

/** Options of {@link summarizeIterations}. */
export interface SummarizeOptions {
  /** Loader workers reported by the job (null or 0: loading in the main process). */
  workers: number | null;
  /** Fewest whole blocks for a summary; fewer gives null (default and minimum 2). */
  minBlocks?: number;
}

/** Fewest iterations per block: below this, block means of a busy loader are too noisy. */
const MIN_BLOCK = 5;

/**
 * Most blocks for the confidence interval. With many short blocks, slow drifts (epoch boundaries, the cold keeper's
 * rhythm) correlate neighbouring block means and the interval comes out too narrow; 10 to 30 batches is the usual
 * advice for batch means (Schmeiser 1982), so long series get longer blocks.
 */
export const MAX_BLOCKS = 30;

/**
 * Iterations per block for the confidence intervals: at least max(W, 5), and a multiple of W. A DataLoader with W
 * workers builds one whole batch per worker, so batches arrive in bursts of W and the wait alternates (450, 0, 450, 0
 * ms); a block that spans whole delivery periods has the same mix of long and short waits as any other, so block means
 * are comparable.
 */
export function blockSizeFor(workers: number | null): number {
  const w = workers !== null && workers > 0 ? Math.round(workers) : 1;
  return w * Math.ceil(Math.max(w, MIN_BLOCK) / w);
}

/**
 * Summarises an iteration series (one rank): discards the warm-up (MSER, at least iteration 0), keeps whole blocks
 * only, and estimates the per-iteration time, wait and compute by batch means. Means are totals over iterations, never
 * medians: with bursty delivery the median wait is ~0 while the mean wait is what the job actually loses (DESIGN.md,
 * "Statistics"). Returns null when fewer than `minBlocks` blocks remain. Iterations are taken in order of their index
 * `i`.
 */
export function summarizeIterations(iterations: readonly Iteration[], opts: SummarizeOptions): IterationSummary | null {
  const periodBlock = blockSizeFor(opts.workers);
  const minBlocks = Math.max(2, opts.minBlocks ?? 2);
  if (iterations.length < minBlocks * periodBlock) return null;

  const ordered = isOrdered(iterations) ? iterations : [...iterations].sort((a, b) => a.i - b.i);
  const iterMs = ordered.map((it) => it.waitMs + it.computeMs);
  // MSER batches of one block: whole delivery periods, so bursts do not look like a transient.
  const warmup = detectWarmup(iterMs, { batchSize: periodBlock });
  const periodsPerBlock = Math.max(1, Math.ceil((ordered.length - warmup) / (MAX_BLOCKS * periodBlock)));
  const blockSize = periodBlock * periodsPerBlock;
  const blocks = Math.floor((ordered.length - warmup) / blockSize);
  if (blocks < minBlocks) return null;

  const end = warmup + blocks * blockSize;
  const window = ordered.slice(warmup, end);
  const iterWindow = iterMs.slice(warmup, end);
  const iter = batchMeans(iterWindow, blockSize);
  const wait = batchMeans(
    window.map((it) => it.waitMs),
    blockSize,
  );
  const compute = batchMeans(
    window.map((it) => it.computeMs),
    blockSize,
  );

  let samples = 0;
  for (const it of window) samples += it.samples;
  const totalMs = iter.mean * window.length;

  return {
    warmupIterations: warmup,
    measuredIterations: window.length,
    blockSize,
    blocks,
    iterMs: { mean: iter.mean, halfWidth: iter.halfWidth, proven: true },
    waitMs: { mean: wait.mean, halfWidth: wait.halfWidth, proven: true },
    computeMs: { mean: compute.mean, halfWidth: compute.halfWidth, proven: true },
    samplesPerIter: samples / window.length,
    samplesPerSec: totalMs > 0 ? samples / (totalMs / 1000) : 0,
    medianIterMs: median(iterWindow),
    relativePrecision: iter.halfWidth !== null && iter.mean > 0 ? iter.halfWidth / iter.mean : null,
  };
}

function isOrdered(iterations: readonly Iteration[]): boolean {
  for (let k = 1; k < iterations.length; k++) if (iterations[k].i < iterations[k - 1].i) return false;
  return true;
}
