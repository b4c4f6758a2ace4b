/**
 * Adaptive stopping: end a mode once its per-iteration time is known tightly enough, or when the iteration budget is
 * spent.
 */
import type { Iteration, IterationSummary } from '../schema/profile.js';
import { MAX_BLOCKS, blockSizeFor, summarizeIterations } from './summarize.js';
import { tQuantile975 } from './stats.js';
import { mserTruncation } from './warmup.js';

/** Options of {@link stoppingDecision}. */
export interface StoppingOptions {
  /** Target relative half-width of the per-iteration time (0.02: +-2%). */
  precision: number;
  /** Fewest measured iterations (after warm-up) before precision may stop the mode. */
  minIterations: number;
  /** Iteration budget: stop when this many iterations have been reported. */
  maxIterations: number;
  /** Loader workers reported by the job. */
  workers: number | null;
  /** Fewest blocks before precision may stop (default MIN_STOP_BLOCKS; fewer for one of several pooled runs). */
  minBlocks?: number;
}

/** Whether to stop, why, and the summary the decision rests on. */
export interface StoppingDecision {
  /** True when the mode has measured enough. */
  stop: boolean;
  /** 'precision': the target was reached; 'budget': maxIterations reached; null: keep going. */
  reason: 'precision' | 'budget' | null;
  /** Summary of the iterations so far; null with too few. */
  summary: IterationSummary | null;
}

/**
 * Fewest blocks before precision may stop a mode: with fewer, the batch-means variance has too few degrees of freedom
 * to trust (Schmeiser 1982 recommends 10 to 30 batches).
 */
export const MIN_STOP_BLOCKS = 10;

/**
 * Sequential stopping on the relative half-width (the "relative precision" procedure, Law & Kelton, Simulation Modeling
 * and Analysis, 9.4.1): stop when at least `minIterations` iterations were measured after warm-up, in at least 10
 * blocks, and halfWidth / mean <= precision; or when the budget is reached. Precision wins when both hold. Linear in
 * the iterations (plus one sort for the median): a few ms on 10k iterations, fine to call every 250 ms.
 */
export function stoppingDecision(iterations: readonly Iteration[], opts: StoppingOptions): StoppingDecision {
  return decideOn(summarizeIterations(iterations, { workers: opts.workers }), iterations.length, opts);
}

/**
 * The same rule as {@link stoppingDecision}, kept up to date as iterations arrive, for a caller that asks again and
 * again about a growing series (the profiler, every 250 ms). Each new iteration costs O(1): its times go into prefix
 * sums, each whole MSER batch of `blockSizeFor(workers)` iterations into a batch mean summed exactly as detectWarmup
 * sums it. A decision then costs O(n / batch) for the MSER truncation (a loop over a Float64Array, no allocation per
 * iteration) and O(blocks) <= O(MAX_BLOCKS) for the batch means, read off the prefix sums; no copy, map or sort of the
 * series.
 *
 * Decisions match stoppingDecision's (block sums from prefix sums differ in the last bits: a relative precision within
 * ~1e-12 of the target may round the other way). The median in the summary is a P-square estimate (Jain & Chlamtac
 * 1985, "The P2 algorithm for dynamic calculation of quantiles and histograms without storing observations") over every
 * iteration but the first, for progress display; summarizeIterations gives the exact one. Iterations must come in order
 * of their index and the list may only grow; otherwise the tracker starts over from the list it is given.
 */
export class StoppingTracker {
  private seen = 0;
  private lastIndex = -Infinity;
  private iterMs: Float64Array = new Float64Array(1024);
  private prefixIter: Float64Array = new Float64Array(1025);
  private prefixWait: Float64Array = new Float64Array(1025);
  private prefixCompute: Float64Array = new Float64Array(1025);
  private prefixSamples: Float64Array = new Float64Array(1025);
  private batchMeans: Float64Array = new Float64Array(256);
  private batches = 0;
  private truncation = 0;
  private truncationBatches = -1;
  private median = new P2Median();
  private readonly periodBlock: number;

  constructor(/** Loader workers the tracker was made for. */ readonly workers: number | null) {
    this.periodBlock = blockSizeFor(workers);
  }

  /** The decision on `iterations`, which extend the list of the previous call. */
  decide(iterations: readonly Iteration[], opts: StoppingOptions): StoppingDecision {
    if ((opts.workers ?? null) !== this.workers) return stoppingDecision(iterations, opts);
    if (iterations.length < this.seen) this.reset();
    for (let k = this.seen; k < iterations.length; k++) {
      if (!this.append(iterations[k])) {
        // Out of order: the plain rule sorts; start over on the next call.
        this.reset();
        return stoppingDecision(iterations, opts);
      }
    }
    this.seen = iterations.length;
    const summary = this.summary();
    return decideOn(summary, iterations.length, opts);
  }

  private reset(): void {
    this.seen = 0;
    this.lastIndex = -Infinity;
    this.batches = 0;
    this.truncationBatches = -1;
    this.median = new P2Median();
  }

  private append(it: Iteration): boolean {
    if (it.i < this.lastIndex) return false;
    this.lastIndex = it.i;
    const n = this.seen;
    if (n + 1 >= this.iterMs.length) {
      const size = this.iterMs.length * 2;
      this.iterMs = grown(this.iterMs, size);
      this.prefixIter = grown(this.prefixIter, size + 1);
      this.prefixWait = grown(this.prefixWait, size + 1);
      this.prefixCompute = grown(this.prefixCompute, size + 1);
      this.prefixSamples = grown(this.prefixSamples, size + 1);
    }
    const iterMs = it.waitMs + it.computeMs;
    this.iterMs[n] = iterMs;
    this.prefixIter[n + 1] = this.prefixIter[n] + iterMs;
    this.prefixWait[n + 1] = this.prefixWait[n] + it.waitMs;
    this.prefixCompute[n + 1] = this.prefixCompute[n] + it.computeMs;
    this.prefixSamples[n + 1] = this.prefixSamples[n] + it.samples;
    if (n > 0) this.median.add(iterMs);
    this.seen = n + 1;
    const m = this.periodBlock;
    if ((n + 1) % m === 0) {
      // Summed from the batch's first value, as detectWarmup does, so the batch means are the same numbers.
      let sum = 0;
      for (let i = n + 1 - m; i <= n; i++) sum += this.iterMs[i];
      if (this.batches === this.batchMeans.length) this.batchMeans = grown(this.batchMeans, this.batches * 2);
      this.batchMeans[this.batches++] = sum / m;
    }
    return true;
  }

  // summarizeIterations on the stored series, with minBlocks 2.
  private summary(): IterationSummary | null {
    const n = this.seen;
    const m = this.periodBlock;
    if (n < 2 * m) return null;
    // The truncation depends on the whole batches only: computed once per new batch.
    if (this.truncationBatches !== this.batches) {
      this.truncation = mserTruncation(this.batchMeans, this.batches);
      this.truncationBatches = this.batches;
    }
    const warmup = Math.min(n, Math.max(1, this.truncation * m));
    const periodsPerBlock = Math.max(1, Math.ceil((n - warmup) / (MAX_BLOCKS * m)));
    const blockSize = m * periodsPerBlock;
    const blocks = Math.floor((n - warmup) / blockSize);
    if (blocks < 2) return null;
    const measured = blocks * blockSize;
    const iter = blockMeans(this.prefixIter, warmup, blockSize, blocks);
    const wait = blockMeans(this.prefixWait, warmup, blockSize, blocks);
    const compute = blockMeans(this.prefixCompute, warmup, blockSize, blocks);
    const samples = this.prefixSamples[warmup + measured] - this.prefixSamples[warmup];
    const totalMs = iter.mean * measured;
    return {
      warmupIterations: warmup,
      measuredIterations: measured,
      blockSize,
      blocks,
      iterMs: { mean: iter.mean, halfWidth: iter.halfWidth, proven: true },
      waitMs: { mean: wait.mean, halfWidth: wait.halfWidth, proven: true },
      computeMs: { mean: compute.mean, halfWidth: compute.halfWidth, proven: true },
      samplesPerIter: samples / measured,
      samplesPerSec: totalMs > 0 ? samples / (totalMs / 1000) : 0,
      medianIterMs: this.median.estimate(),
      relativePrecision: iter.mean > 0 ? iter.halfWidth / iter.mean : null,
    };
  }
}

function decideOn(summary: IterationSummary | null, reported: number, opts: StoppingOptions): StoppingDecision {
  const precise =
    summary !== null &&
    summary.measuredIterations >= opts.minIterations &&
    summary.blocks >= (opts.minBlocks ?? MIN_STOP_BLOCKS) &&
    summary.relativePrecision !== null &&
    summary.relativePrecision <= opts.precision;
  if (precise) return { stop: true, reason: 'precision', summary };
  if (reported >= opts.maxIterations) return { stop: true, reason: 'budget', summary };
  return { stop: false, reason: null, summary };
}

// Batch means (stats.ts batchMeans) of `blocks` blocks from `start`, off prefix sums.
function blockMeans(
  prefix: Float64Array,
  start: number,
  blockSize: number,
  blocks: number,
): { mean: number; halfWidth: number } {
  const grand = (prefix[start + blocks * blockSize] - prefix[start]) / (blocks * blockSize);
  let ss = 0;
  for (let b = 0; b < blocks; b++) {
    const blockMean = (prefix[start + (b + 1) * blockSize] - prefix[start + b * blockSize]) / blockSize;
    ss += (blockMean - grand) ** 2;
  }
  const sd = Math.sqrt(ss / (blocks - 1));
  return { mean: grand, halfWidth: (tQuantile975(blocks - 1) * sd) / Math.sqrt(blocks) };
}

function grown(from: Float64Array, size: number): Float64Array {
  const to = new Float64Array(size);
  to.set(from.subarray(0, Math.min(from.length, size)));
  return to;
}

/** The P-square estimate of the median (Jain & Chlamtac 1985): five markers, O(1) per value. */
class P2Median {
  private readonly q: number[] = [];
  private readonly pos = [1, 2, 3, 4, 5];
  private readonly want = [1, 2, 3, 4, 5];
  private static readonly STEP = [0, 0.25, 0.5, 0.75, 1];

  add(x: number): void {
    const q = this.q;
    if (q.length < 5) {
      q.push(x);
      q.sort((a, b) => a - b);
      return;
    }
    let k: number;
    if (x < q[0]) {
      q[0] = x;
      k = 0;
    } else if (x >= q[4]) {
      q[4] = Math.max(q[4], x);
      k = 3;
    } else {
      k = 0;
      while (x >= q[k + 1]) k++;
    }
    for (let i = k + 1; i < 5; i++) this.pos[i]++;
    for (let i = 0; i < 5; i++) this.want[i] += P2Median.STEP[i];
    for (let i = 1; i < 4; i++) {
      const d = this.want[i] - this.pos[i];
      if ((d >= 1 && this.pos[i + 1] - this.pos[i] > 1) || (d <= -1 && this.pos[i - 1] - this.pos[i] < -1)) {
        const s = Math.sign(d);
        const n = this.pos;
        const parabolic =
          q[i] +
          (s / (n[i + 1] - n[i - 1])) *
            ((n[i] - n[i - 1] + s) * ((q[i + 1] - q[i]) / (n[i + 1] - n[i])) +
              (n[i + 1] - n[i] - s) * ((q[i] - q[i - 1]) / (n[i] - n[i - 1])));
        q[i] =
          q[i - 1] < parabolic && parabolic < q[i + 1] ? parabolic : q[i] + (s * (q[i + s] - q[i])) / (n[i + s] - n[i]);
        n[i] += s;
      }
    }
  }

  estimate(): number {
    const q = this.q;
    if (q.length === 0) return NaN;
    if (q.length < 5) return q.length % 2 === 1 ? q[q.length >> 1] : (q[q.length / 2 - 1] + q[q.length / 2]) / 2;
    return q[2];
  }
}
