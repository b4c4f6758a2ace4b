/**
 * The prep stage, t_prep = R * u / eff(c): the prep CPU-seconds per sample (u), the CPUs the profiled job could use
 * (c0), and how prep scales with CPUs (eff(c), the curve itself in ../cpu-scaling.ts). Three steps, each a function
 * below: u from the cached and synthetic modes; the cached mode's time, pooled with any CPU-sweep runs that measured it
 * again; and the curve, from the sweep or linear through the cached mode.
 */
import { prepCpuSecPerSample } from '../../analysis/mode-rates.js';
import type { IterationSummary, Profile } from '../../schema/profile.js';
import { MISSING_TEXT } from '../advice-text.js';
import { effectiveParallelism, fitCpuScaling, pooledSecPerSample, type CpuScaling } from '../cpu-scaling.js';
import { notEnoughData, parameter, type Fitted, type NotEnoughData } from './fitted.js';
import { loaderSetPace, proven, type MeasuredModes } from './modes.js';
import { cpusForPrep, mainCpusOf, profiledCpusOf, workersOf } from './loader-workers.js';

/** The prep stage as fitted. */
export interface PrepCpuFit {
  /** Pre-processing CPU-seconds per sample, u. */
  prepCpuSecPerSample: number;
  /** CPUs the profiled job could use, c0. */
  profiledCpus: number;
  /** eff(c): effective parallelism of c CPUs. */
  cpuScaling: CpuScaling;
  /** True when eff(c) per CPU is assumed (1), not measured: no sweep, and prep did not set the cached mode's pace. */
  cpuShareAssumed: boolean;
  /**
   * The cached mode's iteration time, pooled with the CPU sweep's runs at c0 when there are any: every later use of the
   * cached time (fetch-bound or not, in storage.ts) takes this one.
   */
  cachedTime: IterationSummary;
}

/** Options of the prep fit. */
export interface PrepCpuOptions {
  /** A fitted curve from the caller; without it, the profile's CPU sweep, else linear. */
  cpuScaling?: Extract<CpuScaling, { kind: 'fitted' }>;
}

/** u, c0 and eff(c) for a job of `profiledRanks` ranks; not enough data when either mode lacks CPU time per sample. */
export function fitPrepCpu(
  profile: Profile,
  modes: MeasuredModes,
  profiledRanks: number,
  stepCpuSecPerSample: number,
  options: PrepCpuOptions = {},
): Fitted<PrepCpuFit> | NotEnoughData {
  const { synthetic, cached } = modes;
  if (cached.jobCpuSecPerSample === null) return notEnoughData('modes.cached.jobCpuSecPerSample', 'cached');
  if (synthetic.jobCpuSecPerSample === null) return notEnoughData('modes.synthetic.jobCpuSecPerSample', 'synthetic');
  const u = prepCpu(modes);
  const profiledCpus = profiledCpusOf(profile, cached);
  const sweep = options.cpuScaling ?? fitCpuScaling(profile);
  // The sweep's runs at c0 measured the cached time again; a caller's curve brings no runs.
  const repeats =
    sweep !== null && !options.cpuScaling
      ? (profile.cpuSweep ?? []).filter((r) => r.status === 'ok' && r.summary && r.cpus?.length === profiledCpus)
      : [];
  const cachedTime = pooledCachedTime(
    cached.summary,
    repeats.map((r) => r.summary!),
    profiledCpus,
  );
  const curve = scalingCurve(
    modes,
    profiledRanks,
    u.value,
    profiledCpus,
    cachedTime.value,
    sweep,
    workersOf(cached),
    mainCpusOf(profile, modes, cachedTime.value, profiledRanks),
    stepCpuSecPerSample,
  );
  return {
    kind: 'fitted',
    value: {
      prepCpuSecPerSample: u.value,
      profiledCpus,
      cpuScaling: curve.value,
      cpuShareAssumed: sweep === null && !loaderSetPace(cachedTime.value, modes.synthetic.summary),
      cachedTime: cachedTime.value,
    },
    parameters: [
      ...u.parameters,
      parameter(
        'c0',
        'CPUs the profiled job could use',
        profiledCpus,
        'CPUs',
        cached.cpus ? 'cached mode cpus (affinity)' : 'host.cpus',
        true,
      ),
      ...curve.parameters,
    ],
    caveats: [...cachedTime.caveats, ...curve.caveats],
  };
}

/** u: CPU of the job tree per sample with prep (cached) less without it (synthetic); 0 when not measurable. */
function prepCpu(modes: MeasuredModes): Fitted<number> {
  const measured = prepCpuSecPerSample(modes.synthetic, modes.cached)!;
  const u = Math.max(0, measured);
  const note =
    measured > 0
      ? undefined
      : 'not measurable (the cached mode used no more CPU per sample than the synthetic mode): taken as 0';
  const source = 'cached jobCpuSecPerSample - synthetic jobCpuSecPerSample';
  return {
    kind: 'fitted',
    value: u,
    parameters: [
      parameter(
        'u',
        'prep CPU time per sample',
        u * 1000,
        'CPU-ms',
        source,
        proven(modes.synthetic, modes.cached),
        note,
      ),
    ],
    caveats: [],
  };
}

/**
 * The cached mode's time, pooled by precision with `repeats`, runs that measured it again at the same `cpus`. Pooled
 * rather than one run overwriting the other: on a shared machine one of them can land in a slow spell
 * (../cpu-scaling.ts).
 */
function pooledCachedTime(
  cached: IterationSummary,
  repeats: IterationSummary[],
  cpus: number,
): Fitted<IterationSummary> {
  if (repeats.length === 0) return { kind: 'fitted', value: cached, parameters: [], caveats: [] };
  const runs = [cached, ...repeats];
  const pooled = pooledSecPerSample(runs);
  const toIterMs = 1000 * cached.samplesPerIter;
  const iterMs = {
    mean: pooled.sec * toIterMs,
    halfWidth: pooled.halfWidthSec === null ? null : pooled.halfWidthSec * toIterMs,
    proven: runs.every((x) => x.iterMs.proven),
  };
  return {
    kind: 'fitted',
    value: { ...cached, iterMs },
    parameters: [],
    caveats: [
      MISSING_TEXT.pooledCached(
        cpus,
        runs.map((x) => x.iterMs),
        1 / pooled.sec,
        cached.samplesPerSec,
      ),
    ],
  };
}

/**
 * eff(c): the sweep's curve when there is one; else linear: eff(c) = e * c CPUs' worth of the job's CPU work (the
 * step's own and prep) per second, so that the CPUs cap the pace at R * (u + k_s) / (e * c) per sample, k_s the step's
 * CPU per sample (./cpu-share.ts; model.ts, stageTimes).
 *
 * e is measured where prep set the pace in the cached mode: the CPUs did it when the workers were as many as the CPUs
 * left to them (e makes the cap reproduce the cached time), the workers did it when they were fewer (e is then what
 * each worker gave, taken to hold per CPU, so the CPU what-if promises nothing from CPUs the workers could not use; the
 * workers' own limit is ./loader-workers.ts). Where prep did not set the pace the cached time is only a lower bound of
 * the capacity and is not used: e = 1 (a CPU gives one CPU-second a second), with the other load's share as the
 * pessimistic end (model.ts, assumptions).
 */
function scalingCurve(
  modes: MeasuredModes,
  ranks: number,
  u: number,
  profiledCpus: number,
  cachedTime: IterationSummary,
  sweep: Extract<CpuScaling, { kind: 'fitted' }> | null,
  workers: number | null,
  mainCpusPerRank: number,
  stepCpuSecPerSample: number,
): Fitted<CpuScaling> {
  if (sweep) {
    const row = parameter(
      'eff(c)',
      'effective parallelism of c CPUs',
      effectiveParallelism(sweep, profiledCpus),
      'CPUs at c0',
      `fitted: ${sweep.source}`,
      true,
    );
    return { kind: 'fitted', value: sweep, parameters: [row], caveats: [] };
  }
  // num_workers=0 loads in series with the step: the prep rate is what is left of the cached time after it.
  const serialStep =
    workers === 0 ? modes.synthetic.summary.iterMs.mean / 1000 / modes.synthetic.summary.samplesPerIter : 0;
  const cachedSecPerSample = Math.max(1e-9, cachedTime.iterMs.mean / 1000 / cachedTime.samplesPerIter - serialStep);
  const prepBound = loaderSetPace(cachedTime, modes.synthetic.summary);
  const measuredEff = u > 0 ? (ranks * u) / cachedSecPerSample : 0;
  // CPUs that were pre-processing: all of them but the training processes' own, or the workers when fewer.
  const forPrep = cpusForPrep(profiledCpus, ranks, mainCpusPerRank);
  // With num_workers=0 each rank's training process is its one pre-processing CPU.
  const busy = workers !== null ? Math.min(forPrep, ranks * Math.max(1, workers)) : forPrep;
  const cpusSetPace = busy === forPrep && workers !== 0;
  const perCpu = !prepBound
    ? 1
    : cpusSetPace
      ? (ranks * (u + stepCpuSecPerSample)) / (profiledCpus * cachedSecPerSample)
      : measuredEff / busy;
  const source = !prepBound
    ? 'assumed 1: a CPU gives one CPU-second a second (cached mode was not prep-bound, so its pace is only a ' +
      'lower bound)'
    : cpusSetPace
      ? 'R*(u + k_s) / (cached iterMs / samplesPerIter) / c0 (cached mode was prep-bound on its CPUs)'
      : `R*u / (cached iterMs / samplesPerIter${serialStep > 0 ? ' - T_gpu / b, num_workers=0' : ''}) / ${workers === 0 ? 'R (num_workers=0: one CPU per rank)' : 'R*W0 (fewer workers than CPUs)'} (cached mode was prep-bound)`;
  const row = parameter(
    'eff/c',
    "effective parallelism per CPU of the job's CPU work (linear scaling: no CPU sweep)",
    perCpu,
    'CPUs per CPU',
    source,
    proven(modes.synthetic, modes.cached),
    prepBound ? undefined : 'assumption: prep did not set the pace, so no measurement bounds a CPU from above',
  );
  return {
    kind: 'fitted',
    value: { kind: 'linear', perCpu },
    parameters: [row],
    caveats: [MISSING_TEXT.linearScaling],
  };
}
