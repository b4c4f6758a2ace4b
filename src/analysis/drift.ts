/**
 * How a machine's pace moved across the runs of one profile, and how much the runs' means vary beyond their own in-run
 * noise. Why modes run in mirrored order, and the fit on the log of each run's mean: docs/method.md, "Drift".
 */
import { mean } from './stats.js';

/** One run's mean per-iteration time, placed in time. */
export interface RunPoint {
  /** Which mode (or other group) the run measured: runs of one group share a true mean. */
  group: string;
  /** The run's midpoint, seconds from any fixed origin. */
  midSec: number;
  /** The run's mean per-iteration time, ms (> 0). */
  meanMs: number;
  /** Standard error of that mean from within the run (batch means), ms; null when unknown. */
  seMs: number | null;
}

/** What the fit found. */
export interface DriftFit {
  /**
   * Fitted steady drift of the pace, relative change per second (0.001 = 0.1% slower each second); null when there were
   * too few runs to fit it apart from the scatter (one mode run twice): the scatter then holds the drift.
   */
  slopePerSec: number | null;
  /**
   * Variance of a run's mean around the drift line beyond its in-run noise, relative (a share of the group's mean,
   * squared); 0 when the scatter is within the in-run noise.
   */
  runToRunRelVariance: number;
  /** Degrees of freedom of runToRunRelVariance: runs less groups, less one for the slope when it was fitted. */
  df: number;
}

/**
 * Least-squares fit of log(mean) = log(group mean) + slope x time over the runs. Without enough runs for the slope, the
 * scatter around each group's mean alone (slope null); null when no group ran more than once.
 */
export function fitDrift(points: readonly RunPoint[]): DriftFit | null {
  const usable = points.filter((p) => p.meanMs > 0 && Number.isFinite(p.midSec));
  const groups = groupBy(usable);
  const withSlope = usable.length - groups.size - 1 >= 1;
  const df = usable.length - groups.size - (withSlope ? 1 : 0);
  if (df < 1) return null;
  let sxy = 0;
  let sxx = 0;
  const centred: { x: number; y: number; relSe: number | null }[] = [];
  for (const runs of groups.values()) {
    const xBar = mean(runs.map((r) => r.midSec));
    const value = (r: RunPoint) => Math.log(r.meanMs);
    const yBar = mean(runs.map(value));
    for (const r of runs) {
      const x = r.midSec - xBar;
      const y = value(r) - yBar;
      sxy += x * y;
      sxx += x * x;
      centred.push({ x, y, relSe: r.seMs === null ? null : r.seMs / r.meanMs });
    }
  }
  const slope = withSlope && sxx > 0 ? sxy / sxx : 0;
  let rss = 0;
  for (const c of centred) rss += (c.y - slope * c.x) ** 2;
  // The residuals hold the in-run noise too: what is left beyond it is run-to-run.
  const inRun = centred.filter((c) => c.relSe !== null).map((c) => c.relSe! ** 2);
  const inRunMean = inRun.length > 0 ? mean(inRun) : 0;
  return { slopePerSec: withSlope ? slope : null, runToRunRelVariance: Math.max(0, rss / df - inRunMean), df };
}

/** One group's runs pooled with equal weights. */
export interface PooledMean {
  /** Plain mean of the runs' means, ms: with a balanced order, the pace at the profile's middle. */
  meanMs: number;
  /** Half-width of its 95% interval, ms, in-run noise and run-to-run variation together; null when unknown. */
  halfWidthMs: number | null;
  /** Welch-Satterthwaite degrees of freedom of that interval. */
  df: number | null;
}

/** One run's mean with its in-run standard error and that error's degrees of freedom. */
export interface RunMean {
  meanMs: number;
  seMs: number | null;
  /** Degrees of freedom of seMs (blocks - 1). */
  df: number;
}

/**
 * Pools one group's runs with equal weights (a precision-weighted mean would let the longer run pull the mean off the
 * profile's middle, and a steady drift back in). Its variance is the runs' in-run variances over n², plus the
 * run-to-run variance over n; the degrees of freedom of the two parts combine by Welch-Satterthwaite, so a run-to-run
 * part resting on two degrees of freedom widens the interval as much as it should.
 */
export function poolRuns(
  runs: readonly RunMean[],
  runToRun: { varianceMs2: number; df: number } | null,
  quantile: (df: number) => number,
): PooledMean {
  const n = runs.length;
  const meanMs = mean(runs.map((r) => r.meanMs));
  if (n === 0 || runs.some((r) => r.seMs === null || r.df < 1)) return { meanMs, halfWidthMs: null, df: null };
  const parts: { variance: number; df: number }[] = runs.map((r) => ({ variance: r.seMs! ** 2 / n ** 2, df: r.df }));
  if (runToRun && runToRun.varianceMs2 > 0) parts.push({ variance: runToRun.varianceMs2 / n, df: runToRun.df });
  const variance = parts.reduce((sum, p) => sum + p.variance, 0);
  const denominator = parts.reduce((sum, p) => sum + p.variance ** 2 / p.df, 0);
  const df = denominator > 0 ? Math.max(1, variance ** 2 / denominator) : Infinity;
  return { meanMs, halfWidthMs: quantile(df) * Math.sqrt(variance), df: Number.isFinite(df) ? df : null };
}

function groupBy(points: readonly RunPoint[]): Map<string, RunPoint[]> {
  const groups = new Map<string, RunPoint[]>();
  for (const p of points) {
    const list = groups.get(p.group);
    if (list) list.push(p);
    else groups.set(p.group, [p]);
  }
  return groups;
}
