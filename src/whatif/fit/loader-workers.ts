/**
 * The loader-workers term of the prep stage: a DataLoader runs num_workers processes per rank, so at most that many
 * CPUs pre-process at once, however many the server has. eff_w(W), the effective parallelism of W workers per rank, all
 * ranks together (CPUs' worth of prep work per second), is fitted from the cached mode at the script's own count and,
 * with profile --workers, from the sweep's runs at the other counts; the prediction takes
 *
 *   eff(c, W) = min(eff(c - R*m), eff_w(W))
 *
 * with m the CPUs each rank's training process keeps busy itself (collation, pin memory, kernel launches;
 * ranks[].mainCpuMsPerSample). W = 0 loads in the training process, in series with its step.
 */
import type { IterationSummary, ModeResult, Profile } from '../../schema/profile.js';
import { difference, liesAbove } from '../../analysis/estimate.js';
import { parameter, type Fitted, type ModelParameter } from './fitted.js';
import { throughOrigin } from '../through-origin.js';
import { loaderSetPace, proven, type MeasuredModes } from './modes.js';
import { fitCpuShare, stepCpuOf } from './cpu-share.js';

/** One measured count: the effective parallelism its cached time implies. */
export interface WorkersPoint {
  /** Loader workers per rank. */
  workers: number;
  /** R*u / (cached seconds per sample): CPUs' worth of prep per second, all ranks. */
  eff: number;
  /** Whether prep set the pace (else eff is only a lower bound). */
  prepBound: boolean;
  /** R*W: CPUs' worth of prep if each worker had a whole CPU (a worker is one process: never more). */
  capacity: number;
}

/** The loader-workers fit. */
export interface LoaderWorkersFit {
  /** num_workers per rank the profiled job ran with; null when not reported (then workers are not modelled). */
  profiledWorkers: number | null;
  /** Measured points (W >= 1), ascending in workers; the profiled count first among equals. */
  workersPoints: WorkersPoint[];
  /** CPUs each rank's training process kept busy itself in the cached mode (0 when not reported). */
  mainCpusPerRank: number;
  /**
   * Seconds per sample the training process took to load a sample itself (W = 0), measured by a sweep at 0; null when
   * not measured.
   */
  serialPrepSecPerSample: number | null;
  /**
   * Profiled at num_workers=0 with no count of workers measured: CPUs' worth of prep per second, all ranks, that one
   * worker a rank gives, R*u / s with s the serial prep time per sample (a worker does what the training process did,
   * in the same time); eff_w(W) = W times it. Null otherwise.
   */
  serialWorkerEff: number | null;
  /**
   * Profiled at num_workers=0 with no count of workers measured: the most CPUs' worth of prep per second the workers
   * together can give, all ranks (serialPrepCeiling); null otherwise.
   */
  serialPrepCeiling: number | null;
  /** The framework whose trainer built the loader ('hf-trainer', 'lightning'), for the line to paste. */
  loaderFramework: string | null;
  /** Where the points came from. */
  workersSource: string;
  /**
   * The share of a CPU each worker is taken to give at a count where prep did not set the pace: what one worker gave at
   * the largest count that did, or else 1 (a worker is one process: one CPU at most). Such a count's own pace is only a
   * lower bound of its capacity and is never used as the capacity.
   */
  assumedWorkerShare: number;
  /** Whether assumedWorkerShare was measured (a count where prep set the pace). */
  workerShareMeasured: boolean;
  /**
   * Seconds per iteration the training process spends taking a batch the loader already has ready (the queue,
   * unpickling, pinning), in series with its step: the cached mode's wait beyond the synthetic mode's where prep did
   * not set the pace, else the training process's own CPU beyond the step's (a lower bound: the stall hides the rest).
   * 0 with no workers (the process loads itself) and when not measured. A step 8x faster still pays it.
   */
  handoverSecPerIter: number;
  /**
   * Seconds per iteration the step itself ran slower beside loader workers that kept up (the cached mode's step beyond
   * the synthetic mode's, where beyond noise): the profile's CPU contention, the step sharing cores and caches with
   * prep. Part of the step wherever workers run beside it; 0 with none (the process loads in series) and where the
   * loader set the pace (the stall then hides it).
   */
  contentionSecPerIter: number;
}

/** Fits eff_w from the cached mode and the workers sweep, for a job of `ranks` ranks and prep CPU `u` s per sample. */
export function fitLoaderWorkers(
  profile: Profile,
  modes: MeasuredModes,
  ranks: number,
  u: number,
  cachedTime: IterationSummary,
): Fitted<LoaderWorkersFit> {
  const cached = modes.cached;
  const profiledWorkers = workersOf(cached);
  const mainCpu = mainCpuPerSample(profile, modes);
  const empty: LoaderWorkersFit = {
    profiledWorkers,
    workersPoints: [],
    mainCpusPerRank: mainCpusOf(profile, modes, cachedTime, ranks),
    serialPrepSecPerSample: null,
    serialWorkerEff: null,
    serialPrepCeiling: null,
    loaderFramework: paceOf(cached)?.loader?.framework ?? null,
    workersSource: 'not reported',
    assumedWorkerShare: 1,
    workerShareMeasured: false,
    handoverSecPerIter: 0,
    contentionSecPerIter: 0,
  };
  if (profiledWorkers === null) {
    return {
      kind: 'fitted',
      value: empty,
      parameters: [],
      caveats: ['the job did not report its loader workers: predictions assume prep can use every CPU'],
    };
  }
  const { points, serial } = measuredPoints(profile, modes, ranks, u, cachedTime, profiledWorkers);
  const swept = (profile.workersSweep ?? []).map((r) => r.workersAsked).filter((w) => w !== undefined);
  // Serial loading alone (W = 0, no sweep): one worker does per sample what the training process did, in its time.
  const serialWorkerEff = points.length === 0 && serial !== null && serial > 0 && u > 0 ? (ranks * u) / serial : null;
  const profiledCpus = profiledCpusOf(profile, cached);
  const forPrep = cpusForPrep(profiledCpus, ranks, empty.mainCpusPerRank);
  const largest = points.filter((p) => p.prepBound).at(-1);
  // Workers that share CPUs with each other and the step get less than a CPU each: the measured share per busy unit.
  const measuredShare = largest ? Math.min(1, largest.eff / Math.min(largest.capacity, forPrep)) : null;
  const handover = profiledWorkers === 0 ? null : handoverOf(profile, modes, cachedTime);
  const value: LoaderWorkersFit = {
    ...empty,
    workersPoints: points,
    serialPrepSecPerSample: serial,
    serialWorkerEff,
    serialPrepCeiling:
      serialWorkerEff === null
        ? null
        : serialPrepCeiling(profile, modes, { ranks, u, serialWorkerEff, profiledCpus, cachedTime }),
    workersSource:
      swept.length > 0
        ? `cached mode at ${profiledWorkers} (the script's) and profile --workers ${swept.join(',')}`
        : `cached mode at ${profiledWorkers} workers (the script's); no sweep`,
    assumedWorkerShare: measuredShare ?? 1,
    workerShareMeasured: measuredShare !== null,
    handoverSecPerIter: handover?.sec ?? 0,
    contentionSecPerIter: profiledWorkers === 0 ? 0 : contentionOf(modes, cachedTime),
  };
  return {
    kind: 'fitted',
    value,
    parameters: workersRows(value, modes, swept.length > 0, mainCpu, handover),
    caveats: workersCaveats(value, swept.length > 0, mainCpu),
  };
}

/**
 * The measured counts (W >= 1), ascending, a count measured twice (the script's own, swept again) one point at the mean
 * of its runs; and the seconds per sample of loading in series with the step (W = 0), where measured.
 */
function measuredPoints(
  profile: Profile,
  modes: MeasuredModes,
  ranks: number,
  u: number,
  cachedTime: IterationSummary,
  profiledWorkers: number,
): { points: WorkersPoint[]; serial: number | null } {
  const synthetic = modes.synthetic.summary;
  const serialOf = (summary: IterationSummary) => Math.max(0, secPerSample(summary) - secPerSample(synthetic));
  const byCount = new Map<number, IterationSummary[]>();
  const add = (workers: number, summary: IterationSummary) => {
    if (workers > 0) byCount.set(workers, [...(byCount.get(workers) ?? []), summary]);
  };
  add(profiledWorkers, cachedTime);
  // num_workers=0: the cached mode itself loaded in series with the step.
  let serial = profiledWorkers === 0 ? serialOf(cachedTime) : null;
  for (const point of (profile.workersSweep ?? []).filter(
    (r) => r.status === 'ok' && r.summary && r.workersAsked !== undefined,
  )) {
    if (point.workersAsked === 0 && profiledWorkers !== 0) serial = serialOf(point.summary!);
    else add(point.workersAsked!, point.summary!);
  }
  const points = [...byCount].map(([workers, runs]) => ({
    workers,
    eff: runs.reduce((sum, r) => sum + (u > 0 ? (ranks * u) / secPerSample(r) : 0), 0) / runs.length,
    prepBound: runs.some((r) => loaderSetPace(r, synthetic)),
    capacity: ranks * workers,
  }));
  return { points: points.sort((a, b) => a.workers - b.workers), serial };
}

/**
 * The most prep the workers of a job profiled at num_workers=0 can give, CPUs' worth per second, all ranks. Each
 * process kept a = eff_w(1) / R CPUs busy while it prepared. A worker is one thread of prep (DataLoader workers run
 * torch with one thread), so it holds min(a, 1) of a CPU and still gives a: where a > 1, the training process's own
 * thread pools ran beside its prep (on the GPU server's 16 CPUs, resnet18 at -j 0 burned 15.5 CPUs a prep second,
 * and -j 2 ran twice as fast as -j 1, docs/results.md). The job can have at most c such workers; and no more than
 * the CPUs the other load left free (c - x_ext), or what it held at -j 0 ((u + k_s) over its cached time a sample)
 * where that was more: on a machine others keep busy, workers beside the step take from the job's share, not from CPUs
 * the other load holds (on the 2-core VM at x_ext = 1.7-1.8 the job held 0.20-0.36 CPUs at -j 0, 1 and 2 alike,
 * docs/results.md, "Serial loading"). The workers get the prep's part of it, u / (u + k_s); the step the rest.
 */
function serialPrepCeiling(
  profile: Profile,
  modes: MeasuredModes,
  fit: { ranks: number; u: number; serialWorkerEff: number; profiledCpus: number; cachedTime: IterationSummary },
): number {
  const { ranks, u, serialWorkerEff, profiledCpus, cachedTime } = fit;
  const stepSec = stepCpuOf(modes.synthetic).secPerSample ?? 0;
  const external = fitCpuShare(profile, modes, profiledCpus).value.externalCpus;
  const held = (ranks * (u + stepSec)) / secPerSample(cachedTime);
  const a = serialWorkerEff / ranks;
  const jobCpus = Math.min(Math.min(1, a) * profiledCpus, Math.max(profiledCpus - external, held));
  return jobCpus * Math.max(1, a) * (u / (u + stepSec));
}

/** The fit's parameter rows: W0, eff_w(1), and m, h and g where measured. */
function workersRows(
  fit: LoaderWorkersFit,
  modes: MeasuredModes,
  swept: boolean,
  mainCpu: { source: string } | null,
  handover: { sec: number; source: string } | null,
): ModelParameter[] {
  const measured = proven(modes.synthetic, modes.cached);
  const rows = [
    parameter(
      'W0',
      'loader workers per rank, as profiled',
      fit.profiledWorkers!,
      'workers',
      'start event loader.workers (ranks[].workers)',
      true,
    ),
    parameter(
      'eff_w(1)',
      'effective parallelism of one worker',
      workersParallelism(fit, 1),
      'CPUs per worker',
      swept
        ? `fitted through ${fit.workersSource}`
        : fit.serialWorkerEff !== null
          ? 'R*u / (cached - synthetic time per sample): a worker prepares a sample in the time the training process took'
          : `R*u / cached time / W0 (${fit.workersSource})`,
      measured,
      fit.workersPoints.some((p) => p.prepBound) || fit.serialWorkerEff !== null
        ? undefined
        : 'assumed: prep did not set the pace at any measured count, so each worker is taken to get up to one ' +
            'CPU (its pace there was only a lower bound)',
    ),
  ];
  if (fit.serialPrepCeiling !== null) {
    const what = 'most prep all the workers together can give (profiled at num_workers=0)';
    const source =
      'min(c0 min(1, a), max(c0 - x_ext, R (u + k_s) / cached time a sample)) x max(1, a) x u / (u + k_s), ' +
      'a = eff_w(1)/R: the CPUs the job can hold (free beside the other load, or held at num_workers=0), a worker ' +
      'one CPU at most giving what a process gave, their prep share';
    const stepKnown = stepCpuOf(modes.synthetic).secPerSample !== null;
    const assumed = "assumed: the step's own CPU (k_s) was not reported, taken as 0: all the job holds is prep";
    rows.push(
      parameter(
        'eff_w,max',
        what,
        fit.serialPrepCeiling,
        'CPUs',
        source,
        measured && stepKnown,
        stepKnown ? undefined : assumed,
      ),
    );
  }
  if (mainCpu !== null) {
    const what = "CPUs each rank's training process keeps busy itself (prep left out)";
    rows.push(parameter('m', what, fit.mainCpusPerRank, 'CPUs', `${mainCpu.source} x cached samples/s per rank`, true));
  }
  if (handover !== null) {
    const what = 'time per iteration to take a ready batch from the loader, in series with the step';
    rows.push(parameter('h', what, handover.sec * 1000, 'ms', handover.source, measured));
  }
  if (fit.contentionSecPerIter > 0) {
    const what = 'time per iteration the step runs slower beside the loader (CPU contention)';
    const source = 'cached computeMs - synthetic computeMs (the loader kept up; beyond noise)';
    rows.push(parameter('g', what, fit.contentionSecPerIter * 1000, 'ms', source, measured));
  }
  return rows;
}

/** What the fit assumed where nothing measured it. */
function workersCaveats(fit: LoaderWorkersFit, swept: boolean, mainCpu: object | null): string[] {
  const caveats: string[] = [];
  if (fit.serialWorkerEff !== null)
    caveats.push(
      'workers: profiled at num_workers=0, each loader worker is assumed to prepare a sample in the time the ' +
        'training process took, all of them side by side, with the CPUs shared; the hand-over of a ready batch ' +
        'was not measured and counts as 0, and the CPU per sample is taken as at 0, though it grows where the ' +
        'workers and the step fill every CPU (profile --workers measures both)',
    );
  if (!swept && (fit.profiledWorkers ?? 0) > 0)
    caveats.push(
      `workers: each added loader worker is assumed to add what one did at ${fit.profiledWorkers} (profile --workers ` +
        `measures it)`,
    );
  if (mainCpu === null)
    caveats.push(
      "the training process's own CPU was not reported: it is not subtracted from the CPUs the workers can use",
    );
  return caveats;
}

/**
 * eff_w(W): piecewise linear through (0, 0) and the measured points; beyond the last, the last segment's slope goes on
 * (flat once a sweep saw more workers buy nothing; through the origin with one point, the no-sweep case). A point where
 * prep did not set the pace only bounds eff from below: its capacity is its workers at the assumed share of a CPU each,
 * never less than what it did. Profiled at W = 0 alone: W times what the serial loading gives (serialWorkerEff), at
 * most serialPrepCeiling. Infinity when workers are not modelled.
 */
export function workersParallelism(
  fit: Pick<LoaderWorkersFit, 'profiledWorkers' | 'workersPoints' | 'assumedWorkerShare'> &
    Partial<Pick<LoaderWorkersFit, 'serialWorkerEff' | 'serialPrepCeiling'>>,
  workers: number,
): number {
  const points = fit.workersPoints;
  if (fit.profiledWorkers !== null && points.length === 0 && fit.serialWorkerEff != null)
    return Math.min(workers * fit.serialWorkerEff, fit.serialPrepCeiling ?? Infinity);
  if (fit.profiledWorkers === null || points.length === 0) return Infinity;
  return throughOrigin(
    points.map((p) => ({
      x: p.workers,
      y: p.prepBound ? p.eff : Math.max(p.eff, p.capacity * fit.assumedWorkerShare),
    })),
    workers,
  );
}

/**
 * h, the hand-over of a ready batch: where the loader kept up, the wait the cached mode saw beyond the synthetic mode's
 * (the whole of it is hand-over); where prep set the pace the wait is mostly stall, so the training process's own CPU
 * beyond its step is taken, a lower bound.
 */
function handoverOf(
  profile: Profile,
  modes: MeasuredModes,
  cachedTime: IterationSummary,
): { sec: number; source: string } | null {
  const b = cachedTime.samplesPerIter;
  if (!loaderSetPace(cachedTime, modes.synthetic.summary)) {
    const wait = Math.max(0, cachedTime.waitMs.mean - modes.synthetic.summary.waitMs.mean) / 1000;
    return { sec: wait, source: 'cached waitMs - synthetic waitMs (the loader kept up: the wait is the hand-over)' };
  }
  const own = mainCpuPerSample(profile, modes);
  const step = stepCpuOf(modes.synthetic).secPerSample;
  if (own === null || step === null) return null;
  return {
    sec: Math.max(0, own.sec - step) * b,
    source:
      "(cached - synthetic) ranks[].mainCpuMsPerSample x b (prep-bound: the training process's own CPU, a lower bound)",
  };
}

/**
 * g, the step's slow-down beside a loader that kept up: the cached mode's time between batches beyond the synthetic
 * mode's, where that lies beyond noise (0 otherwise, and where the loader set the pace).
 */
function contentionOf(modes: MeasuredModes, cachedTime: IterationSummary): number {
  const synthetic = modes.synthetic.summary;
  if (loaderSetPace(cachedTime, synthetic)) return 0;
  const growth = difference(cachedTime.computeMs, synthetic.computeMs);
  return liesAbove(growth) ? growth.mean / 1000 : 0;
}

/** CPUs the profiled job could use: the cached mode's affinity, else the host's. */
export function profiledCpusOf(profile: Profile, cached: ModeResult): number {
  return cached.cpus?.length ?? profile.host.cpus;
}

/**
 * CPUs left to pre-processing: the job's less what its ranks' training processes kept busy themselves (model.ts,
 * prepParallelism).
 */
export function cpusForPrep(profiledCpus: number, ranks: number, mainCpusPerRank: number): number {
  return Math.max(1e-9, profiledCpus - ranks * mainCpusPerRank);
}

/**
 * CPUs each rank's training process kept busy itself in the cached mode: its CPU per sample x its samples/s; 0 when not
 * reported.
 */
export function mainCpusOf(
  profile: Profile,
  modes: MeasuredModes,
  cachedTime: IterationSummary,
  ranks: number,
): number {
  const own = mainCpuPerSample(profile, modes);
  return own === null ? 0 : own.sec * (cachedTime.samplesPerSec / Math.max(1, ranks));
}

/**
 * The training process's own CPU per sample, prep left out: the cached mode's when its loader had workers; else
 * (num_workers=0: the process pre-processed itself) a workers-sweep run's with workers, else the synthetic mode's (the
 * step alone). Null when the job did not report it.
 */
export function mainCpuPerSample(profile: Profile, modes: MeasuredModes): { sec: number; source: string } | null {
  const own = (result: ModeResult): number | null => {
    const ms = paceOf(result)?.mainCpuMsPerSample;
    return ms != null ? ms / 1000 : null;
  };
  const cached = own(modes.cached);
  if (cached !== null && (workersOf(modes.cached) ?? 0) > 0)
    return { sec: cached, source: 'cached mode ranks[].mainCpuMsPerSample' };
  for (const point of profile.workersSweep ?? []) {
    const sec = (point.workersAsked ?? 0) > 0 && point.status === 'ok' ? own(point) : null;
    if (sec !== null) return { sec, source: `profile --workers ${point.workersAsked}: ranks[].mainCpuMsPerSample` };
  }
  const synthetic = own(modes.synthetic);
  return synthetic !== null
    ? { sec: synthetic, source: 'synthetic mode ranks[].mainCpuMsPerSample (the step alone)' }
    : null;
}

/** num_workers per rank of a mode's pace rank, when the job reported it. */
export function workersOf(result: ModeResult): number | null {
  return paceOf(result)?.workers ?? null;
}

/** The rank that set a mode's pace (the first rank where none is named). */
function paceOf(result: ModeResult): ModeResult['ranks'][number] | undefined {
  return result.ranks.find((r) => r.rank === result.paceRank) ?? result.ranks[0];
}

function secPerSample(summary: IterationSummary): number {
  return summary.iterMs.mean / 1000 / summary.samplesPerIter;
}
