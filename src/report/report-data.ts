/**
 * Chart-ready data of a profile (pure): the split per mode, iteration series with their warm-up, resource timelines,
 * and what-if curves. Values that are not finite (a hand-edited or hostile file) become gaps, never NaN in a chart.
 */
import { MODES, type Mode } from '../schema/events.js';
import type { Profile } from '../schema/profile.js';
import type { WhatIfCurvesOrReason } from './whatif-source.js';
import { judgedRankWaits } from '../analysis/straggler.js';
import { warmupOf } from '../export/iteration-rows.js';

/** Per-mode decomposition of the iteration time, ms (differential method). */
export interface BreakdownBar {
  mode: Mode;
  computeMs: number | null;
  prepStallMs: number | null;
  fetchStallMs: number | null;
  /** Checkpoint saves amortised per iteration (every mode saves); 0 when the job saved nothing seen. */
  checkpointMs: number | null;
  /** Epoch starts amortised per iteration (the synthetic mode replays: none); 0 when none were reported. */
  boundaryMs: number | null;
}

/** One mode's iteration times. */
export interface IterationSeries {
  mode: Mode;
  /** [iteration index, ms] pairs, in order. */
  points: [number, number][];
  /** [iteration index, ms] of the iterations discarded as warm-up (each run's, in a mode measured in several). */
  warmupPoints: [number, number][];
  /** [middle iteration index, mean ms] of each block of measured iterations (the CI's blocks). */
  blockMeans: [number, number][];
}

/** One mode's resource samples, x in seconds since the mode started. */
export interface ResourceSeries {
  mode: Mode;
  /** [s, CPU %] */
  cpuPct: [number, number | null][];
  /** [s, MB/s] */
  diskReadMBps: [number, number | null][];
  /** [s, MiB] */
  pageCacheMiB: [number, number | null][];
}

/** One rank's wait for data and step in the mode the straggler is judged in (multi-rank jobs). */
export interface RankBar {
  label: string;
  waitMs: number;
  stepMs: number;
  straggler: boolean;
}

/** Everything the report's charts draw. */
export interface ReportData {
  breakdown: BreakdownBar[];
  /** Each rank's wait and step (the cold mode, else the cached); null for one rank. */
  ranks: { mode: 'cached' | 'cold'; bars: RankBar[] } | null;
  iterations: IterationSeries[];
  resources: ResourceSeries[];
  whatIf: WhatIfCurvesOrReason;
  /** Logical CPUs of the host (for the 'CPU %' axis: 100 = all cores). */
  hostCpus: number;
}

/** Iterations per series kept for the charts; longer series are thinned evenly. */
const MAX_POINTS = 2000;

/** Builds the chart data of a profile. */
export function reportData(profile: Profile, whatIf: WhatIfCurvesOrReason): ReportData {
  const a = profile.analysis;
  const compute = finite(a?.computeMs?.mean);
  const prep = finite(a?.prepStallMs?.mean);
  const fetch = finite(a?.fetchStallMs?.mean);
  const present = MODES.filter((m) => profile.modes[m]);
  const breakdown: BreakdownBar[] = present.map((mode) => ({
    mode,
    computeMs: compute,
    prepStallMs: mode === 'synthetic' ? 0 : prep,
    fetchStallMs: mode === 'cold' ? fetch : 0,
    checkpointMs: finite(a?.checkpointStall?.ms.mean) ?? 0,
    boundaryMs: mode === 'synthetic' ? 0 : (finite(a?.boundaryStall?.ms.mean) ?? 0),
  }));

  const iterations: IterationSeries[] = [];
  const resources: ResourceSeries[] = [];
  for (const mode of present) {
    const result = profile.modes[mode]!;
    const rank = result.ranks.find((r) => r.rank === result.paceRank) ?? result.ranks[0];
    if (rank) {
      const ordered = [...rank.iterations].sort((x, y) => x.i - y.i);
      const summary = rank.summary ?? result.summary;
      const isWarmup = warmupOf({ ...rank, summary });
      const step = Math.max(1, Math.ceil(ordered.length / MAX_POINTS));
      const points: [number, number][] = [];
      const warmupPoints: [number, number][] = [];
      ordered.forEach((it, k) => {
        const ms = it.waitMs + it.computeMs;
        if (!Number.isFinite(ms) || ms <= 0) return;
        // Every warm-up iteration is marked (there are few); the rest thinned to MAX_POINTS.
        if (isWarmup(it, k)) warmupPoints.push([it.i, ms]);
        if (k % step === 0) points.push([it.i, ms]);
      });
      const measured = ordered.filter((it, k) => !isWarmup(it, k));
      iterations.push({ mode, points, warmupPoints, blockMeans: blockMeans(measured, summary?.blockSize ?? 6) });
    }
    const t0 = result.startedAt;
    const sec = (t: number) => round((t - t0) / 1000, 2);
    resources.push({
      mode,
      cpuPct: result.resources.map((r) => [sec(r.t), finite(r.cpuPct)]),
      diskReadMBps: result.resources.map((r) => [sec(r.t), finite(r.diskReadBytesPerSec / 1e6)]),
      pageCacheMiB: result.resources.map((r) => [sec(r.t), finite(r.pageCacheBytes / 2 ** 20)]),
    });
  }
  return { breakdown, ranks: rankBars(profile), iterations, resources, whatIf, hostCpus: profile.host.cpus };
}

/** Each rank's wait and step where the straggler is judged; null for a single-rank job. */
function rankBars(profile: Profile): ReportData['ranks'] {
  const judged = judgedRankWaits(profile.modes);
  if (!judged) return null;
  const straggler = profile.analysis?.straggler ?? null;
  const bars = judged.waits.map((r) => ({
    label: `rank ${r.rank}${straggler?.rank === r.rank ? ` (straggler: ${straggler.cause})` : ''}`,
    waitMs: round(r.waitMs.mean, 3),
    stepMs: round(r.stepMs.mean, 3),
    straggler: straggler?.rank === r.rank,
  }));
  return { mode: judged.mode, bars };
}

function blockMeans(
  iterations: { i: number; waitMs: number; computeMs: number }[],
  blockSize: number,
): [number, number][] {
  const out: [number, number][] = [];
  // Thin long runs to at most MAX_POINTS / 4 blocks so the line stays readable.
  const size = Math.max(blockSize, blockSize * Math.ceil(iterations.length / blockSize / (MAX_POINTS / 4)));
  for (let k = 0; k + size <= iterations.length; k += size) {
    let sum = 0;
    for (let j = k; j < k + size; j++) sum += iterations[j].waitMs + iterations[j].computeMs;
    const mean = sum / size;
    if (Number.isFinite(mean) && mean > 0) out.push([iterations[k + Math.floor(size / 2)].i, mean]);
  }
  return out;
}

function finite(value: number | undefined | null): number | null {
  return value === undefined || value === null || !Number.isFinite(value) ? null : value;
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
