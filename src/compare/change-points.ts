/**
 * Change points in a series by E-divisive means (Matteson & James 2014, as Apache Otava and MongoDB's signal processing
 * use it): the energy statistic with alpha = 1, a seeded permutation test for each candidate, and recursive bisection
 * of the segments either side of each accepted change. Pure: no files, no clock; the same series and seed give the same
 * answer.
 *
 * Why the false-alarm rate holds: on a series with no change, a change is reported only when the first test (the whole
 * series) rejects, and a permutation test rejects with probability at most p. Tests of the parts run only once a change
 * was found, so they add no false alarm to a flat series.
 */
import { median } from '../analysis/stats.js';
import { mulberry32 } from '../random.js';
import type { ChangePoint } from '../schema/history-output.js';

export type { ChangePoint };

/**
 * How the search is run: the significance of each permutation test, permutations per test (199: p-values in steps of
 * 1/200), the fewest points in a segment either side of a change, and the seed of the permutations.
 */
export const CHANGE_POINT_DEFAULTS = { pValue: 0.05, permutations: 199, minSegment: 3, seed: 1 } as const;
export type ChangePointOptions = Partial<Record<keyof typeof CHANGE_POINT_DEFAULTS, number>>;

/** The change points of `series`, in index order, with the medians of the segments they separate. */
export function changePoints(series: readonly number[], options: ChangePointOptions = {}): ChangePoint[] {
  const settings = { ...CHANGE_POINT_DEFAULTS, ...options };
  const random = mulberry32(settings.seed);
  const found: { index: number; pValue: number }[] = [];
  const pending: [number, number][] = [[0, series.length]];
  while (pending.length > 0) {
    const [start, end] = pending.pop()!;
    const segment = series.slice(start, end);
    const split = bestSplit(segment, settings.minSegment);
    if (split === null) continue;
    const pValue = permutationPValue(segment, split.q, settings, random);
    if (pValue > settings.pValue) continue;
    found.push({ index: start + split.tau, pValue });
    pending.push([start, start + split.tau], [start + split.tau, end]);
  }
  found.sort((a, b) => a.index - b.index);
  const bounds = [0, ...found.map((f) => f.index), series.length];
  return found.map((f, i) => {
    const before = median(series.slice(bounds[i], bounds[i + 1]));
    const after = median(series.slice(bounds[i + 1], bounds[i + 2]));
    return { ...f, before, after, relative: before === 0 ? null : (after - before) / before };
  });
}

/**
 * The split tau that maximises the energy statistic Q = tau (n - tau) / n * (2 mean|x - y| - mean|x - x'| - mean|y -
 * y'|) over tau in [minSegment, n - minSegment]; null when the segment is too short.
 */
export function bestSplit(segment: readonly number[], minSegment: number): { tau: number; q: number } | null {
  const n = segment.length;
  const least = Math.max(2, minSegment);
  if (n < 2 * least) return null;
  // Pair sums within the first k points (left[k]) and within the last n - k (right[k]), each O(n) to extend.
  const left = new Float64Array(n + 1);
  const right = new Float64Array(n + 1);
  for (let k = 1; k <= n; k++) {
    let add = 0;
    for (let i = 0; i < k - 1; i++) add += Math.abs(segment[k - 1] - segment[i]);
    left[k] = left[k - 1] + add;
  }
  for (let k = n - 1; k >= 0; k--) {
    let add = 0;
    for (let i = k + 1; i < n; i++) add += Math.abs(segment[k] - segment[i]);
    right[k] = right[k + 1] + add;
  }
  const total = left[n];
  let best: { tau: number; q: number } | null = null;
  for (let tau = least; tau <= n - least; tau++) {
    const m = n - tau;
    const between = total - left[tau] - right[tau];
    const energy = (2 * between) / (tau * m) - left[tau] / ((tau * (tau - 1)) / 2) - right[tau] / ((m * (m - 1)) / 2);
    const q = ((tau * m) / n) * energy;
    if (best === null || q > best.q) best = { tau, q };
  }
  return best;
}

/** (1 + permutations whose best Q reaches `observed`) / (1 + permutations). */
function permutationPValue(
  segment: readonly number[],
  observed: number,
  settings: Required<ChangePointOptions>,
  random: () => number,
): number {
  const shuffled = [...segment];
  let atLeast = 0;
  for (let r = 0; r < settings.permutations; r++) {
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
    }
    const split = bestSplit(shuffled, settings.minSegment);
    if (split !== null && split.q >= observed * (1 - 1e-12)) atLeast++;
  }
  return (1 + atLeast) / (1 + settings.permutations);
}
