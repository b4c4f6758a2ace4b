// Whether the block in progress has measured enough (run-launch.ts asks each poll): every rank's precision or budget,
// and the epoch boundary a precision stop waits for.
import { StoppingTracker } from '../analysis/stopping.js';
import type { ProcessEvents } from './events-reader.js';
import type { BlockSlice } from './block-result.js';
import type { Mode } from '../schema/events.js';

/** What the stop decision reads of a block, and keeps between polls: a stopping tracker per events file. */
export interface StopState {
  /** The block's mode, name and limits (run-launch.ts LaunchBlock). */
  block: {
    mode: Mode;
    label: string;
    precision: number;
    minIterations: number;
    maxIterations: number;
    minStopBlocks?: number;
  };
  trackers: Map<string, StoppingTracker>;
}

// A precision stop waits for the loader's first epoch boundary within this many times the iterations run: a boundary's
// cost (workers restarted, saves) is measured only there.
export const EPOCH_WAIT_FACTOR = 3;

/** Whether a rank has yet to start its second epoch, due within the budget and EPOCH_WAIT_FACTOR of what it ran. */
export function awaitingEpochBoundary(
  processes: readonly Pick<ProcessEvents, 'epochs' | 'iterations'>[],
  maxIterations: number,
): boolean {
  return processes.some((p) => {
    const first = p.epochs.find((e) => e.epoch === 0);
    const length = first?.epochIterations ?? null;
    if (first === undefined || length === null || p.epochs.some((e) => e.epoch > 0)) return false;
    const boundary = first.i + length + 1;
    return boundary <= maxIterations && boundary <= EPOCH_WAIT_FACTOR * p.iterations.length;
  });
}

/**
 * Whether the block has measured enough: every rank entered it and reached its precision or budget, carried iterations
 * not counted; `waitForEpoch` false (--continue): no wait for an epoch's end.
 */
export function decideBlockStop(slices: readonly BlockSlice[], current: StopState, waitForEpoch = true) {
  const block = current.block;
  const started = slices.length > 0 && slices.every((s) => s.entered);
  const decisions = slices
    .filter((s) => s.measured.length > 0)
    .map((s) => {
      const workers = s.workers;
      let tracker = current.trackers.get(s.file);
      // The start event (with the workers) may come after the first iterations: a new count, a new tracker.
      if (!tracker || tracker.workers !== workers) {
        tracker = new StoppingTracker(workers);
        current.trackers.set(s.file, tracker);
      }
      return tracker.decide(s.measured, {
        precision: block.precision,
        minIterations: block.minIterations,
        maxIterations: Math.max(1, block.maxIterations - s.carried),
        workers,
        minBlocks: block.minStopBlocks,
      });
    });
  const slowest = decisions.reduce<(typeof decisions)[number] | null>(
    (worst, d) => (worst === null || (d.summary?.iterMs.mean ?? 0) > (worst.summary?.iterMs.mean ?? 0) ? d : worst),
    null,
  );
  const iterations = Math.min(...slices.map((s) => s.iterations.length), Infinity);
  const stop =
    started &&
    decisions.length > 0 &&
    decisions.length === slices.length &&
    decisions.every((d) => d.stop) &&
    !(waitForEpoch && awaitingEpochBoundary(slices, block.maxIterations));
  return {
    stop,
    paceMs: slowest?.summary?.iterMs.mean ?? null,
    reason: decisions.some((d) => d.reason === 'precision') ? ('precision' as const) : ('budget' as const),
    progress: {
      mode: block.mode,
      label: block.label,
      iterations: Number.isFinite(iterations) ? iterations : 0,
      maxIterations: block.maxIterations,
      relativePrecision: slowest?.summary?.relativePrecision ?? null,
      medianIterMs: slowest?.summary?.medianIterMs ?? null,
    },
  };
}
