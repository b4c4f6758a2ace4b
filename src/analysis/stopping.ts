/**
 * Adaptive stopping: end a mode once its per-iteration time is known tightly
 * enough, or when the iteration budget is spent.
 */
import type { Iteration, IterationSummary } from '../schema/profile.js';
import { summarizeIterations } from './summarize.js';

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
 * Fewest blocks before precision may stop a mode: with fewer, the batch-means
 * variance has too few degrees of freedom to trust (Schmeiser 1982 recommends
 * 10 to 30 batches).
 */
export const MIN_STOP_BLOCKS = 10;

/**
 * Sequential stopping on the relative half-width (the "relative precision"
 * procedure, Law & Kelton, Simulation Modeling and Analysis, 9.4.1): stop when
 * at least `minIterations` iterations were measured after warm-up, in at least
 * 10 blocks, and halfWidth / mean <= precision; or when the budget is reached.
 * Precision wins when both hold. Linear in the iterations (plus one sort for
 * the median): a few ms on 10k iterations, fine to call every 250 ms.
 */
export function stoppingDecision(iterations: readonly Iteration[], opts: StoppingOptions): StoppingDecision {
  const summary = summarizeIterations(iterations, { workers: opts.workers });
  const precise =
    summary !== null &&
    summary.measuredIterations >= opts.minIterations &&
    summary.blocks >= MIN_STOP_BLOCKS &&
    summary.relativePrecision !== null &&
    summary.relativePrecision <= opts.precision;
  if (precise) return { stop: true, reason: 'precision', summary };
  if (iterations.length >= opts.maxIterations) return { stop: true, reason: 'budget', summary };
  return { stop: false, reason: null, summary };
}
