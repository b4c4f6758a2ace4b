/**
 * Side-by-side of two profiles: every figure with a confidence interval, the change from A to B and whether it is
 * beyond the noise of both.
 */
import { MODES } from '../schema/events.js';
import type { CompareOutputBody } from '../schema/compare-output.js';
import type { Estimate, Profile } from '../schema/profile.js';
import { profileDifferences } from './differences.js';
import { changeBetween, dividedBy, rateEstimate, type Change } from './noise.js';

/** One compared figure (the contract: schema/compare-output.ts). */
export type FigureDiff = CompareOutputBody['figures'][number];

/** The comparison of two profiles. */
export type ProfileComparison = CompareOutputBody;

/** Compares profile A (before) with B (after). */
export function compareProfiles(a: Profile, b: Profile): ProfileComparison {
  const figures: FigureDiff[] = [];
  const add = (
    group: string,
    name: string,
    unit: FigureDiff['unit'],
    better: FigureDiff['better'],
    pick: (p: Profile) => Estimate | null,
  ) => {
    const ea = safe(pick, a);
    const eb = safe(pick, b);
    const change = ea && eb ? changeBetween(ea, eb) : null;
    figures.push({ group, name, unit, better, a: ea, b: eb, change, verdict: judge(change, better) });
  };
  add('split', 'compute', 'ms', 'lower', (p) => p.analysis?.computeMs ?? null);
  add('split', 'prep stall', 'ms', 'lower', (p) => p.analysis?.prepStallMs ?? null);
  add('split', 'fetch stall', 'ms', 'lower', (p) => p.analysis?.fetchStallMs ?? null);
  add('split', 'checkpoint stall', 'ms', 'lower', (p) => p.analysis?.checkpointStall?.ms ?? null);
  add('split', 'epoch-boundary stall', 'ms', 'lower', (p) => p.analysis?.boundaryStall?.ms ?? null);
  add('split', 'iteration time', 'ms', 'lower', (p) => p.analysis?.iterMs ?? null);
  add('split', 'prep stall share', 'share', 'lower', (p) => share(p.analysis?.prepStallMs, p.analysis?.iterMs));
  add('split', 'fetch stall share', 'share', 'lower', (p) => share(p.analysis?.fetchStallMs, p.analysis?.iterMs));
  add('split', 'prep CPU per sample', 'ms/sample', 'lower', (p) =>
    p.analysis?.prepCpuSecPerSample == null ? null : plain(p.analysis.prepCpuSecPerSample * 1000),
  );
  add('split', 'storage read', 'MB/s', 'higher', (p) =>
    p.analysis?.storageReadBytesPerSec == null ? null : plain(p.analysis.storageReadBytesPerSec / 1e6),
  );
  for (const mode of MODES) {
    add(mode, 'iteration time', 'ms', 'lower', (p) => p.modes[mode]?.summary?.iterMs ?? null);
    add(mode, 'throughput', 'samples/s', 'higher', (p) => {
      const s = p.modes[mode]?.summary;
      return s ? rateEstimate(s.samplesPerSec, s.iterMs) : null;
    });
  }
  return {
    a: { jobName: a.jobName, createdAt: a.createdAt },
    b: { jobName: b.jobName, createdAt: b.createdAt },
    differences: profileDifferences(a, b),
    figures,
    worse: figures.filter((f) => f.verdict === 'worse').length,
    better: figures.filter((f) => f.verdict === 'better').length,
  };
}

function judge(change: Change | null, better: 'lower' | 'higher'): FigureDiff['verdict'] {
  if (!change || change.noise === 'unknown') return 'unknown';
  if (change.noise === 'within') return 'same';
  return change.delta < 0 === (better === 'lower') ? 'better' : 'worse';
}

function share(part: Estimate | null | undefined, whole: Estimate | null | undefined): Estimate | null {
  if (!part || !whole || whole.mean <= 0) return null;
  return { ...dividedBy(part, whole.mean), proven: part.proven && whole.proven };
}

/** A figure without an interval. */
function plain(mean: number): Estimate {
  return { mean, halfWidth: null, proven: true };
}

/** Non-finite results (a hostile file's 1e308 + 1e308) are treated as absent. */
function safe(pick: (p: Profile) => Estimate | null, p: Profile): Estimate | null {
  const e = pick(p);
  return e && Number.isFinite(e.mean) && (e.halfWidth === null || Number.isFinite(e.halfWidth)) ? e : null;
}
