/**
 * gate --against --duet: each pair of rounds runs both versions at once, each on its own half of the CPUs, and each
 * version's pace is taken over the window in which both were measuring (Bulej et al., ICPE 2020). A shared runner's
 * pace then moves both alike within the pair, where rounds one after the other each see a different minute of it;
 * on this project's 2-CPU VM the A/A spread of a pair fell from 22% (rounds in turn) to 3.4% (docs/ci.md). Pure
 * functions: the runs are cli/gate-against-action.ts's.
 */

/** One measured iteration: when it ended (ms, the wall clock) and the samples it took. */
export interface TimedIteration {
  t: number;
  samples: number;
}

/**
 * The CPUs each version of pair `pair` runs on: the allowed CPUs in two halves, swapped on alternate pairs so that a
 * CPU busier than the other (its interrupts) falls on both versions. Null with fewer than 2 CPUs.
 */
export function duetCpus(
  allowed: readonly number[],
  pair: number,
): { reference: number[]; candidate: number[] } | null {
  if (allowed.length < 2) return null;
  const half = Math.floor(allowed.length / 2);
  const first = allowed.slice(0, half);
  const second = allowed.slice(half, 2 * half);
  return pair % 2 === 0 ? { reference: first, candidate: second } : { reference: second, candidate: first };
}

/**
 * Each version's ms per sample over the window both measured: from the later first measured iteration to the earlier
 * last one. Outside it one version ran beside the other's start-up (an interpreter importing torch) or alone after the
 * other ended, which a pair must not count. Null when the window holds fewer than 2 iterations of either.
 */
export function overlapPaces(
  reference: readonly TimedIteration[],
  candidate: readonly TimedIteration[],
): { reference: number; candidate: number; windowMs: number } | null {
  if (reference.length === 0 || candidate.length === 0) return null;
  const from = Math.max(reference[0].t, candidate[0].t);
  const to = Math.min(reference[reference.length - 1].t, candidate[candidate.length - 1].t);
  const a = paceWithin(reference, from, to);
  const b = paceWithin(candidate, from, to);
  return a === null || b === null ? null : { reference: a, candidate: b, windowMs: to - from };
}

/** ms per sample of the iterations that ended within [from, to]: the time between the first and last over the samples after the first. */
function paceWithin(iterations: readonly TimedIteration[], from: number, to: number): number | null {
  const within = iterations.filter((it) => it.t >= from && it.t <= to);
  if (within.length < 2) return null;
  const samples = within.slice(1).reduce((sum, it) => sum + it.samples, 0);
  return samples > 0 ? (within[within.length - 1].t - within[0].t) / samples : null;
}
