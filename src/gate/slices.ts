/**
 * A/B in slices (gate --against --epochs later): both versions of the job run at once, and the machine is handed to one
 * at a time for a slice of a few seconds, in the order A B B A ...; the other's whole process group is stopped
 * (SIGSTOP). Slices seconds apart share the pace of a shared machine, which moves within the minute that rounds in turn
 * take (docs/ci.md). Each launch of the two gives one pair of paces; the change is judged over launches, since each
 * launch carries an offset of its own. Pure functions: the runs are cli/against-slices.ts's.
 */
import { pairedChange, type Arm, type PairedChange, type RoundPace } from './paired.js';

/** One slice: which version ran, from when to when (ms since the epoch). */
export interface Slice {
  /** The version that ran; the other was stopped. */
  arm: Arm;
  /** When it was resumed, ms since the epoch. */
  fromMs: number;
  /** When it was stopped again, ms since the epoch. */
  toMs: number;
}

/** An iteration of the job, as its events time it. */
export interface TimedIteration {
  /** When the loop asked for the batch, ms since the epoch. */
  fromMs: number;
  /** When it asked for the next one, ms since the epoch. */
  toMs: number;
  /** Samples in the batch. */
  samples: number;
}

/** Shortest slice, ms: a resume's first iteration is left out, and the rest should dwarf the switch. */
export const MIN_SLICE_MS = 1000;
/** Longest slice, ms: the pace of a shared machine must not move within a pair. */
export const MAX_SLICE_MS = 10_000;
/**
 * Iterations of the slower version a slice should hold: its first, left out, a small share. On train.py (65 ms an
 * iteration) A/A pairs of 1 s slices spread by about 3.9%, of 2 s by about 3.5% (derived from within-round intervals,
 * docs/ci.md): the length matters little.
 */
export const SLICE_ITERATIONS = 30;
/** Fewest pairs of measured slices in a launch: A B B A twice, so a drift within the launch cancels. */
export const MIN_SLICE_PAIRS = 4;

/**
 * Round `index`'s order, of the launches and of the slices: the reference first in odd rounds, the candidate in even
 * ones. The version launched first runs alone while the other starts, and its memory and threads settle first: with
 * the reference always first, the order's effect would read as a change. Mirrored, it falls on both versions, and the
 * judgement over rounds fits it and takes it out (paired.ts). In one 20-round train.py A/A gate the rounds read -5.3%
 * with the reference first and -0.1% with the candidate first; in the next, +0.9% and +0.6% (docs/ci.md).
 */
export function launchOrder(index: number): readonly Arm[] {
  return index % 2 === 1 ? ['reference', 'candidate'] : ['candidate', 'reference'];
}

/** A slice's length for versions whose slower median iteration takes `medianIterMs` (null: not yet known). */
export function sliceMs(medianIterMs: number | null): number {
  return Math.min(MAX_SLICE_MS, Math.max(MIN_SLICE_MS, SLICE_ITERATIONS * (medianIterMs ?? 0)));
}

/**
 * A slice's pace, ms a sample: the iterations that began and ended inside it, the first after the resume left out (its
 * batches were prepared before the stop, its caches cooled by the other version); null with fewer than 2 left.
 */
export function slicePace(slice: Slice, iterations: readonly TimedIteration[]): number | null {
  const inside = iterations.filter((it) => it.fromMs >= slice.fromMs && it.toMs <= slice.toMs).slice(1);
  const samples = inside.reduce((sum, it) => sum + it.samples, 0);
  if (inside.length < 2 || samples === 0) return null;
  return inside.reduce((sum, it) => sum + it.toMs - it.fromMs, 0) / samples;
}

/** What one launch of both versions gave: each version's pace over its slices, and the change within the launch. */
export interface LaunchPaces {
  /** The reference's, then the candidate's pace: the geometric mean over the kept pairs of slices, ms a sample. */
  paces: [RoundPace, RoundPace];
  /** The change within the launch, over its pairs of adjacent slices (its interval leaves out the launch's offset). */
  change: PairedChange;
}

/**
 * The launch's paces from its measured slices in run order (A B B A ...): adjacent slices pair, and a pair where either
 * slice held too few iterations is dropped; null when no pair is left.
 */
export function launchPaces(
  slices: readonly Slice[],
  iterations: Record<Arm, readonly TimedIteration[]>,
): LaunchPaces | null {
  const rounds: RoundPace[] = [];
  for (let k = 0; k + 1 < slices.length; k += 2) {
    const pair = [slices[k], slices[k + 1]].map((slice) => ({
      arm: slice.arm,
      ms: slicePace(slice, iterations[slice.arm]),
    }));
    if (pair.some((p) => p.ms === null)) continue;
    rounds.push(...pair.map((p) => ({ arm: p.arm, msPerSample: p.ms! })));
  }
  if (rounds.length === 0) return null;
  const change = pairedChange(rounds);
  const reference = geometricMean(rounds.filter((r) => r.arm === 'reference').map((r) => r.msPerSample));
  return {
    paces: [
      { arm: 'reference', msPerSample: reference },
      { arm: 'candidate', msPerSample: reference * (1 + change.relative) },
    ],
    change,
  };
}

function geometricMean(values: readonly number[]): number {
  return Math.exp(values.reduce((sum, v) => sum + Math.log(v), 0) / values.length);
}
