import type { Profile } from '../schema/profile.js';
import type { CpuScaling } from './model.js';

/**
 * Fits eff(c), the effective parallelism of c CPUs, from the profile's CPU
 * sweep (profile --cpus): at each CPU count the cached mode's time per sample
 * is R*u/eff(c) when prep is the limit (DESIGN.md, what-if model), so
 * eff(c) = R*u*b / T_cached(c), with u the prep CPU-seconds per sample and b
 * the samples per iteration. The full-CPU cached mode adds a point. Returns
 * null without a sweep: the model then assumes linear scaling and says so.
 * A point where prep was not the limit only bounds eff(c) from below; it is
 * kept, so the curve errs towards "more CPUs will not help".
 */
export function fitCpuScaling(profile: Profile): Extract<CpuScaling, { kind: 'fitted' }> | null {
  const sweep = (profile.cpuSweep ?? []).filter((r) => r.status === 'ok' && r.summary && r.cpus);
  const syn = profile.modes.synthetic;
  const cached = profile.modes.cached;
  if (sweep.length === 0 || !cached?.summary || syn?.jobCpuSecPerSample == null || cached.jobCpuSecPerSample == null) return null;
  const u = Math.max(0, cached.jobCpuSecPerSample - syn.jobCpuSecPerSample);
  if (u <= 0) return null;
  const ranks = Math.max(1, cached.ranks.length);
  const runs = [...sweep, { ...cached, cpus: cached.cpus ?? Array.from({ length: profile.host.cpus }, (_, k) => k) }];
  const byCpus = new Map<number, number>();
  for (const run of runs) {
    const secPerSample = run.summary!.iterMs.mean / 1000 / run.summary!.samplesPerIter;
    byCpus.set(run.cpus!.length, (ranks * u) / secPerSample);
  }
  const points = [...byCpus].map(([cpus, eff]) => ({ cpus, eff })).sort((a, b) => a.cpus - b.cpus);
  return { kind: 'fitted', points, source: `profile --cpus ${sweep.map((r) => r.cpus!.length).join(',')}: cached mode at ${points.map((p) => p.cpus).join(', ')} CPUs` };
}
