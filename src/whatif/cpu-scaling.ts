import { prepCpuSecPerSample } from '../analysis/mode-rates.js';
import type { IterationSummary, Profile } from '../schema/profile.js';
import { stepCpuOf } from './fit/cpu-share.js';
import { reallySlower } from './fit/modes.js';
import { throughOrigin } from './through-origin.js';
import type { z } from 'zod';
import type { CpuScalingSchema } from '../schema/whatif-output.js';

/** How effective parallelism grows with CPUs: eff(c) in "CPUs' worth of prep work per second". */
export type CpuScaling = z.infer<typeof CpuScalingSchema>;

/**
 * Fits eff(c), the effective parallelism of c CPUs, from the profile's CPU sweep (profile --cpus): at each CPU count
 * the cached mode's time per sample is R*u/eff(c) when prep is the limit (DESIGN.md, what-if model), so eff(c) = R*u*b
 * / T_cached(c), with u the prep CPU-seconds per sample and b the samples per iteration. The full-CPU cached mode adds
 * a point. Returns null without a sweep: the model then assumes linear scaling and says so. A point where prep was not
 * the limit only bounds eff(c) from below: it counts at its capacity, its CPUs less what the training steps keep busy
 * (k, fit/cpu-share.ts), never below what it did.
 *
 * Runs at the same CPU count (the cached mode and a sweep point at all CPUs) measured the same thing twice; their times
 * are pooled, weighted by their precision, rather than one overwriting the other. On a shared machine one run can land
 * in a slow spell: a PyTorch profile here measured the cached mode at 78.9 ± 8.5 ms (396.5 samples/s) and the sweep
 * point at all CPUs at 60.3 ± 2.9 ms (517.9 samples/s); validate's control then ran at 513.7 samples/s.
 */
export function fitCpuScaling(profile: Profile): Extract<CpuScaling, { kind: 'fitted' }> | null {
  const sweep = (profile.cpuSweep ?? []).filter((r) => r.status === 'ok' && r.summary && r.cpus);
  const syn = profile.modes.synthetic;
  const cached = profile.modes.cached;
  if (sweep.length === 0 || !cached?.summary || !syn) return null;
  const u = prepCpuSecPerSample(syn, cached);
  if (u === null || !(u > 0)) return null;
  const ranks = Math.max(1, cached.ranks.length);
  const runs = [...sweep, { ...cached, cpus: cached.cpus ?? Array.from({ length: profile.host.cpus }, (_, k) => k) }];
  const byCpus = new Map<number, IterationSummary[]>();
  for (const run of runs) byCpus.set(run.cpus!.length, [...(byCpus.get(run.cpus!.length) ?? []), run.summary!]);
  const stepCpus = stepCpuOf(syn).cpus;
  const points = [...byCpus]
    .map(([cpus, summaries]) => {
      const paced = (ranks * u) / pooledSecPerSample(summaries).sec;
      // A count where prep did not set the pace measured a lower bound only: its capacity is its CPUs less the steps'
      // own.
      const setPace = summaries.some((s) => reallySlower(s, syn.summary!));
      return { cpus, eff: setPace ? paced : Math.max(paced, cpus - ranks * stepCpus) };
    })
    .sort((a, b) => a.cpus - b.cpus);
  const pooled = [...byCpus]
    .filter(([, s]) => s.length > 1)
    .map(([cpus, s]) => `${s.length} runs at ${cpus} CPUs pooled`);
  return {
    kind: 'fitted',
    points,
    source: `profile --cpus ${sweep.map((r) => r.cpus!.length).join(',')}: cached mode at ${points.map((p) => p.cpus).join(', ')} CPUs${pooled.length ? ` (${pooled.join('; ')})` : ''}`,
  };
}

/**
 * eff(c): linear, or piecewise linear through a fitted sweep (proportional below its first point, last slope beyond its
 * last).
 */
export function effectiveParallelism(scaling: CpuScaling, cpus: number): number {
  if (scaling.kind === 'linear') return scaling.perCpu * cpus;
  if (scaling.points.length === 0) return cpus;
  return throughOrigin(
    scaling.points.map((p) => ({ x: p.cpus, y: p.eff })),
    cpus,
  );
}

/**
 * Seconds per sample of runs that measured the same setting: the inverse-variance weighted mean of their times (weights
 * 1 / halfWidth^2), with its half-width 1 / sqrt(sum of weights); the plain mean and no half-width when a run has no
 * interval to weigh it by.
 */
export function pooledSecPerSample(summaries: IterationSummary[]): { sec: number; halfWidthSec: number | null } {
  const perSample = summaries.map((s) => ({
    sec: s.iterMs.mean / 1000 / s.samplesPerIter,
    halfWidth: s.iterMs.halfWidth === null ? null : s.iterMs.halfWidth / 1000 / s.samplesPerIter,
  }));
  if (perSample.some((p) => p.halfWidth === null || !(p.halfWidth > 0))) {
    return { sec: perSample.reduce((sum, p) => sum + p.sec, 0) / perSample.length, halfWidthSec: null };
  }
  const weights = perSample.map((p) => 1 / p.halfWidth! ** 2);
  const total = weights.reduce((a, b) => a + b, 0);
  return {
    sec: perSample.reduce((sum, p, k) => sum + p.sec * weights[k], 0) / total,
    halfWidthSec: 1 / Math.sqrt(total),
  };
}
