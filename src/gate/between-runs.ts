/**
 * The noise between runs, for a regression judged against one stored baseline (gate --baseline --noise-history DIR):
 * the spread of a run-to-run change in main's stored profiles, by their successive differences (von Neumann) with the
 * differences across a change point left out. Why and how: docs/ci.md, "The noise between runs".
 */
import { tQuantile975 } from '../analysis/stats.js';
import { changePoints } from '../compare/change-points.js';

/** The spread of a run-to-run change learned from stored profiles. */
export interface BetweenRuns {
  /** Where it was learned: the folder of profiles. */
  source: string;
  /** Profiles read. */
  profiles: number;
  /** Successive differences used (those across a found step left out). */
  differences: number;
  /** Standard deviation of the relative change between two runs of unchanged code (log pace). */
  sdRelative: number;
  /** 95% half-width of one run's change over another: t(differences - 1) x sdRelative. */
  halfWidth: number;
}

/**
 * The between-run spread of a time-ordered pace series (ms/sample, one value a profile). Null with fewer than 3 usable
 * differences: no spread to learn.
 */
export function betweenRunSpread(paces: readonly number[], source: string): BetweenRuns | null {
  const usable = paces.filter((p) => p > 0 && Number.isFinite(p));
  const steps = new Set(changePoints(usable).map((c) => c.index));
  const differences: number[] = [];
  for (let i = 1; i < usable.length; i++) {
    if (!steps.has(i)) differences.push(Math.log(usable[i] / usable[i - 1]));
  }
  if (differences.length < 3) return null;
  const sd = Math.sqrt(differences.reduce((s, d) => s + d * d, 0) / differences.length);
  return {
    source,
    profiles: usable.length,
    differences: differences.length,
    sdRelative: sd,
    halfWidth: tQuantile975(differences.length - 1) * sd,
  };
}

/** The regression's interval once the noise between runs is counted, and what was used. */
export interface WidenedInterval {
  /** The relative half-width judged: the wider of the two. */
  halfWidth: number;
  /** Which noise set it: 'within' (the two profiles' intervals) or 'between' (the stored history's spread). */
  used: 'within' | 'between';
  /** halfWidth / the within-profile half-width (1 when not widened). */
  factor: number;
}

/**
 * The two profiles' interval (noise within each run) or the history's (noise between runs, which already holds the
 * within-run noise of the runs it learned from), whichever is wider: a run-to-run change is never judged tighter than
 * either says.
 */
export function widenedInterval(withinHalfWidth: number, between: BetweenRuns): WidenedInterval {
  if (between.halfWidth <= withinHalfWidth) return { halfWidth: withinHalfWidth, used: 'within', factor: 1 };
  const factor = withinHalfWidth > 0 ? between.halfWidth / withinHalfWidth : Number.POSITIVE_INFINITY;
  return { halfWidth: between.halfWidth, used: 'between', factor };
}
