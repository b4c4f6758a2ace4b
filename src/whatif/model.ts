/**
 * The what-if model: fitted from what a profile measured, then asked about
 * other cache sizes, CPU counts, storage bandwidths, accelerator counts and
 * accelerator speeds. After DS-Analyzer (Mohan et al., "Analyzing and
 * Mitigating Data Stalls in DNN Training", VLDB 2021, section 4.2): the three
 * stages of the input pipeline overlap, so the slowest one sets the pace.
 *
 * Per sample and per accelerator (rank), with N ranks per server:
 *   t_gpu   = T_synthetic / (b * X)                  X: --gpu-speedup, b: samples per iteration
 *   t_prep  = N * u / eff(c)                         u: prep CPU-seconds per sample, eff(c): effective
 *                                                    parallelism of c CPUs (fitted curve, or linear)
 *   t_fetch = N * (1 - h(M)) * a * s / B_storage     s: bytes per sample, a: storage bytes read per
 *                                                    consumed byte when cold, h(M): cache hit ratio
 *   t       = max(t_gpu, t_prep, t_fetch)
 * prep stall = max(t_gpu, t_prep) - t_gpu; fetch stall = t - max(t_gpu, t_prep).
 *
 * A page-cache hit costs a copy from memory, which is CPU time of the job:
 * the cached mode's CPU time (and so u) already holds it, so hits are not a
 * separate stage. The memory rate the cached mode reached is reported as a
 * lower bound only; using it as a bandwidth would cap every faster-CPU
 * prediction at today's prep rate.
 *
 * N ranks per server: data-parallel ranks of one job (DistributedSampler)
 * share the CPUs, the page cache and the storage, and together read each
 * sample once per epoch, so the cache sees one random permutation per epoch
 * exactly as for one rank.
 */
import { fitCpuScaling, pooledSecPerSample, type CpuScaling } from './cpu-scaling.js';

export type { CpuScaling } from './cpu-scaling.js';
import { ExitCode, UserError } from '../errors.js';
import type { Mode } from '../schema/events.js';
import type { IterationSummary, ModeResult, Profile } from '../schema/profile.js';
import { minioHitRatio, simulateLruEpochs, steadyLruHitRatio, type HitRatioCurve } from './hit-ratio.js';
import { sizesFromHistogram, uniformSizes } from './size-distribution.js';
import { MISSING_TEXT } from './advice-text.js';
import { dataTime, fitOverlap, fitOverlapJoint, PERFECT_OVERLAP } from './overlap.js';
import { formatRate } from '../units.js';
import { bytesPerSample as consumedBytesPerSample } from '../analysis/mode-rates.js';

/**
 * A fetch stall within 2% of the pace counts as none: inside the noise of a
 * measured iteration time. With fetch and prep partly in series any fetch
 * adds a little time, which should not make the job "fetch-bound".
 */
export const NEGLIGIBLE_FETCH_STALL = 0.02;

/** A cold mode that read below this share of its throttle did not keep storage busy. */
const UNSATURATED_SHARE = 0.9;

/** Which cache holds the dataset: the OS page cache (LRU-like) or an application cache that never evicts (MinIO, CoorDL). */
export type CachePolicy = 'page-cache' | 'minio';

/** What limits the pace: the stage with the largest time per sample. */
export type Bottleneck = 'compute' | 'prep' | 'fetch';

/** One fitted parameter, with the measurement it comes from. */
export interface ModelParameter {
  /** Symbol used in the formulas: t_gpu, u, B_storage. */
  symbol: string;
  /** What it is, in words. */
  name: string;
  /** The value, in `unit`. */
  value: number;
  /** Unit of `value`. */
  unit: string;
  /** The measurement: a profile field or a derivation from fields. */
  source: string;
  /** True when every mode it rests on proved its cache state. */
  proven: boolean;
  /** Assumption or limit worth saying (lower bound, assumed, fallback). */
  note?: string;
}

/** The model fitted from one profile. Values in SI units (seconds, bytes). */
export interface FittedModel {
  /** Accelerator compute per iteration, s (synthetic mode). */
  computeSecPerIter: number;
  /** Samples per iteration per rank. */
  samplesPerIter: number;
  /** Ranks (accelerators) the profiled job ran. */
  profiledRanks: number;
  /** Pre-processing CPU-seconds per sample, u. */
  prepCpuSecPerSample: number;
  /** CPUs the profiled job could use. */
  profiledCpus: number;
  /** eff(c). */
  cpuScaling: CpuScaling;
  /** Storage read bandwidth, bytes/s, at the job's read concurrency. */
  storageBytesPerSec: number;
  /** True when the cold mode was not storage-bound, so storageBytesPerSec is only what the job asked for. */
  storageIsLowerBound: boolean;
  /** Share of fetch and prep that runs in series, σ (overlap.ts): 0 for perfect overlap, 1 for none. */
  fetchPrepSerial: number;
  /**
   * True when σ was measured (a cold mode that waited on storage below its
   * throttle). Otherwise σ = 0 is an assumption: a cold mode that kept storage
   * busy shows nothing of how reads and pre-processing overlap.
   */
  overlapMeasured: boolean;
  /**
   * The largest σ the cold mode allows (its time per sample at the upper end
   * of its 95% interval), for answers that must hold whatever the unmeasured
   * overlap; equals fetchPrepSerial when the overlap was measured.
   */
  serialUpperBound: number;
  /** Storage bytes read per consumed byte on a miss, a. */
  readAmplification: number;
  /** Mean bytes per consumed sample, s. */
  bytesPerSample: number;
  /** Dataset bytes, D. */
  datasetBytes: number;
  /** Dataset files. */
  datasetFiles: number;
  /** Samples per epoch (D / s). */
  samplesPerEpoch: number;
  /** Cache size assumed when none is asked: what the page cache could give the dataset when profiled, bytes. */
  defaultCacheBytes: number;
  /** LRU hit-ratio curve of the simulated (possibly scaled-down) dataset. */
  lruCurve: HitRatioCurve;
  /** Simulated bytes per real byte: cache sizes are scaled by this before querying lruCurve. */
  lruScale: number;
  /** Every parameter with its source, for the report. */
  parameters: ModelParameter[];
  /** Assumptions and limits of this fit. */
  caveats: string[];
}

/** A question: the machine and job to predict for. */
export interface Scenario {
  /** Cache available to the dataset, bytes. */
  cacheBytes: number;
  /** CPUs for the whole server (all ranks). */
  cpus: number;
  /** Storage read bandwidth for the whole server, bytes/s. */
  storageBytesPerSec: number;
  /** Accelerators (data-parallel ranks) per server. */
  gpus: number;
  /** Accelerator speed-up factor: compute time is divided by it. */
  gpuSpeedup: number;
  /** Cache policy. */
  cachePolicy: CachePolicy;
  /** Epochs of the job to average over (the first one cold), or null for the steady state (epoch 2 on). */
  epochs: number | null;
}

/** What the model predicts for a scenario. Times per rank; rates for the whole server. */
export interface Prediction {
  /** The scenario asked. */
  scenario: Scenario;
  /** Bytes-weighted cache hit ratio in the steady state (epoch 2 on). */
  steadyHitRatio: number;
  /** Hit ratio the prediction used: steady, or averaged over `epochs` with the first at 0. */
  hitRatio: number;
  /** Per-iteration compute, ms. */
  computeMs: number;
  /** Per-iteration prep stall, ms. */
  prepStallMs: number;
  /** Per-iteration fetch stall, ms. */
  fetchStallMs: number;
  /** Per-iteration time, ms. */
  iterMs: number;
  /** Samples per second, all ranks together. */
  samplesPerSec: number;
  /** One epoch's time at the predicted rate, s. */
  epochSec: number;
  /** The first (cold-cache) epoch, s. */
  firstEpochSec: number;
  /** An epoch in the steady state, s. */
  steadyEpochSec: number;
  /** Fraction of time the accelerator computes. */
  acceleratorUtilization: number;
  /** The limiting stage. */
  bottleneck: Bottleneck;
  /** 'steady state (epoch 2 on)' or 'mean over N epochs, the first cold'. */
  basis: string;
}

/** Options of fitModel. */
export interface FitOptions {
  /** A fitted CPU-scaling curve from a CPU sweep; without it eff(c) is linear and the model says so. */
  cpuScaling?: Extract<CpuScaling, { kind: 'fitted' }>;
  /** Most files simulated for the LRU curve; larger datasets are scaled down (hit ratios depend on M/D). */
  maxSimulatedItems?: number;
  /** Epochs simulated (the first is cold; the rest are averaged for the steady state). */
  simulatedEpochs?: number;
  /** Seed of the simulated epoch orders. */
  seed?: number;
}

/** Simulating 100k files x 3 epochs takes ~0.1 s; the steady hit ratio then varies by < 0.2% between seeds. */
export const DEFAULT_MAX_SIMULATED_ITEMS = 100_000;
/** Fallback page-cache share of host memory when the profile does not record the budget. */
const FALLBACK_MEMORY_SHARE = 0.9;
/** A stall is called real when its 95% CI excludes 0 and it is at least this share of the iteration. */
const REAL_STALL_SHARE = 0.03;

type Usable = ModeResult & { summary: IterationSummary };

/**
 * Fits the model to a profile. Needs all three modes (each prediction is a
 * max over compute, prep and fetch); a missing one is a UserError with exit
 * code MissingInput naming the field and how to measure it. Pure and
 * deterministic (the simulated epoch orders are seeded).
 */
export function fitModel(profile: Profile, options: FitOptions = {}): FittedModel {
  const syn = need(profile, 'synthetic');
  const cached = need(profile, 'cached');
  const cold = need(profile, 'cold');
  const parameters: ModelParameter[] = [];
  const caveats: string[] = [];
  const proven = (...modes: Usable[]): boolean => modes.every((m) => m.state.proven && m.status === 'ok');
  for (const m of [syn, cached, cold]) {
    if (!m.state.proven) caveats.push(MISSING_TEXT.unprovenMode(m.mode, m.state.reason));
  }

  const b = syn.summary.samplesPerIter;
  const computeSecPerIter = syn.summary.iterMs.mean / 1000;
  if (!(b > 0) || !(computeSecPerIter > 0)) throw missing('modes.synthetic.summary.iterMs', 'synthetic');
  parameters.push(
    param('T_gpu', 'accelerator compute per iteration', computeSecPerIter * 1000, 'ms', 'synthetic mode summary.iterMs', proven(syn)),
    param('b', 'samples per iteration per rank', b, 'samples', 'synthetic mode summary.samplesPerIter', proven(syn)),
  );
  const profiledRanks = Math.max(1, cached.ranks.length, cold.ranks.length);
  parameters.push(param('R', 'ranks in the profiled job', profiledRanks, 'ranks', 'ranks of the cached and cold modes', true));

  // u: CPU of the job tree per sample with prep (cached) minus without it (synthetic).
  if (cached.jobCpuSecPerSample === null) throw missing('modes.cached.jobCpuSecPerSample', 'cached');
  if (syn.jobCpuSecPerSample === null) throw missing('modes.synthetic.jobCpuSecPerSample', 'synthetic');
  const measuredU = cached.jobCpuSecPerSample - syn.jobCpuSecPerSample;
  const u = Math.max(0, measuredU);
  const uNote = measuredU > 0 ? undefined : 'not measurable (the cached mode used no more CPU per sample than the synthetic mode): taken as 0';
  parameters.push(
    param('u', 'prep CPU time per sample', u * 1000, 'CPU-ms', 'cached jobCpuSecPerSample - synthetic jobCpuSecPerSample', proven(syn, cached), uNote),
  );

  const profiledCpus = cached.cpus?.length ?? profile.host.cpus;
  parameters.push(
    param('c0', 'CPUs the profiled job could use', profiledCpus, 'CPUs', cached.cpus ? 'cached mode cpus (affinity)' : 'host.cpus', true),
  );
  // A CPU sweep in the profile (profile --cpus) is used unless the caller gives a curve.
  const fittedScaling = options.cpuScaling ?? fitCpuScaling(profile);
  // The sweep's runs at the profiled CPU count measured the cached time again:
  // pooled with the cached mode (cpu-scaling.ts), for every use of that time.
  const repeats = fittedScaling && !options.cpuScaling ? (profile.cpuSweep ?? []).filter((r) => r.status === 'ok' && r.summary && r.cpus?.length === profiledCpus) : [];
  let cachedTime: IterationSummary = cached.summary;
  if (repeats.length > 0) {
    const cachedRuns = [cached.summary, ...repeats.map((r) => r.summary!)];
    const pooled = pooledSecPerSample(cachedRuns);
    const toIterMs = 1000 * cached.summary.samplesPerIter;
    const iterMs = { mean: pooled.sec * toIterMs, halfWidth: pooled.halfWidthSec === null ? null : pooled.halfWidthSec * toIterMs, proven: cachedRuns.every((x) => x.iterMs.proven) };
    cachedTime = { ...cached.summary, iterMs };
    caveats.push(MISSING_TEXT.pooledCached(profiledCpus, cachedRuns.map((x) => x.iterMs), 1 / pooled.sec, cached.summary.samplesPerSec));
  }
  // eff(c0) from the cached mode when it was prep-bound: T_cached/b = R*u/eff(c0).
  const cachedSecPerSample = cachedTime.iterMs.mean / 1000 / cachedTime.samplesPerIter;
  const prepBound = realStall(cachedTime, syn.summary);
  let cpuScaling: CpuScaling;
  if (fittedScaling) {
    cpuScaling = fittedScaling;
    parameters.push(
      param('eff(c)', 'effective parallelism of c CPUs', effectiveParallelism(cpuScaling, profiledCpus), 'CPUs at c0', `fitted: ${cpuScaling.source}`, true),
    );
  } else {
    const measuredEff = u > 0 ? (profiledRanks * u) / cachedSecPerSample : 0;
    // Not prep-bound: eff(c0) is only known to be >= measuredEff; assume each CPU does a CPU-second per second.
    const perCpu = prepBound ? measuredEff / profiledCpus : Math.max(1, measuredEff / profiledCpus);
    cpuScaling = { kind: 'linear', perCpu };
    parameters.push(
      param(
        'eff/c',
        'effective parallelism per CPU (linear scaling assumed: no CPU sweep)',
        perCpu,
        'CPUs per CPU',
        prepBound ? 'R*u / (cached iterMs / samplesPerIter) / c0 (cached mode was prep-bound)' : 'assumed 1 (cached mode was not prep-bound)',
        proven(syn, cached),
        prepBound ? undefined : 'assumption: prep rate at c0 was not observed as a limit',
      ),
    );
    caveats.push(MISSING_TEXT.linearScaling);
  }

  // s: bytes per consumed sample, as the job reported them (or samples x mean file size).
  const bytesPerSample = consumedBytesPerSample(cold) ?? consumedBytesPerSample(cached) ?? profile.dataset.meanFileBytes;
  parameters.push(
    param('s', 'bytes per sample', bytesPerSample, 'bytes', 'cold state.consumedBytes / samples consumed', proven(cold)),
  );
  const readFraction = cold.state.readFraction;
  const readAmplification = readFraction !== null && readFraction > 0 ? readFraction : 1;
  parameters.push(
    param(
      'a',
      'storage bytes read per consumed byte when cold',
      readAmplification,
      'ratio',
      readFraction !== null ? 'cold state.readFraction (readBytes / consumedBytes)' : 'assumed 1 (cold readFraction unknown)',
      proven(cold) && readFraction !== null,
    ),
  );

  if (cold.storageReadBytesPerSec === null || !(cold.storageReadBytesPerSec > 0)) {
    throw missing('modes.cold.storageReadBytesPerSec', 'cold');
  }
  const fetchBound = realStall(cold.summary, cachedTime);
  const throttle = profile.options.storageBwBytesPerSec;
  const storageIsLowerBound = !fetchBound && throttle === null;
  let storageBytesPerSec = !fetchBound && throttle !== null ? throttle : cold.storageReadBytesPerSec;
  let storageSource = fetchBound
    ? 'cold mode storageReadBytesPerSec (cold mode was storage-bound)'
    : throttle !== null
      ? 'options.storageBwBytesPerSec (the throttle; cold mode was not storage-bound)'
      : 'cold mode storageReadBytesPerSec';
  // σ: fitted when the cold mode waited on storage yet read well below the
  // throttle the profile set, so the storage's true rate is known and the
  // shortfall is time the job spent not reading (overlap.ts).
  let fetchPrepSerial = PERFECT_OVERLAP;
  let overlapMeasured = false;
  // Per sample at the profiled settings: what each overlap fit starts from.
  const atProfile = {
    computeSec: computeSecPerIter / b,
    prepSec: (profiledRanks * u) / effectiveParallelism(cpuScaling, profiledCpus),
    coldSec: cold.summary.iterMs.mean / 1000 / cold.summary.samplesPerIter,
  };
  if (fetchBound && throttle !== null && cold.storageReadBytesPerSec < UNSATURATED_SHARE * throttle) {
    const fitted = fitOverlap({ ...atProfile, fetchSec: (profiledRanks * readAmplification * bytesPerSample) / throttle });
    overlapMeasured = fitted !== null;
    if (fitted !== null && fitted !== PERFECT_OVERLAP) {
      fetchPrepSerial = fitted;
      storageBytesPerSec = throttle;
      storageSource = `options.storageBwBytesPerSec (the throttle; the cold mode read ${formatRate(cold.storageReadBytesPerSec)}: its workers alternated reading and pre-processing)`;
    }
  }
  // Without that, the overlap probe (profile --overlap) measures σ directly:
  // the cold mode with part of the dataset resident, fetch and prep balanced.
  let sigmaSource = fetchPrepSerial === PERFECT_OVERLAP ? 'perfect overlap (the max of the two stages)' : 'fitted: the cold mode time per sample, prep from the cached mode, fetch at the throttle';
  const probe = profile.overlapProbe;
  if (!overlapMeasured && probe?.status === 'ok' && probe.summary && probe.state.proven) {
    // σ and the storage's rate together, from the cold mode and the probe (overlap.ts).
    const fitted = fitOverlapJoint({
      ...atProfile,
      probeSec: probe.summary.iterMs.mean / 1000 / probe.summary.samplesPerIter,
      share: probe.residentShare,
    });
    if (fitted !== null) {
      fetchPrepSerial = fitted.serial;
      overlapMeasured = true;
      const held = `${(probe.residentShare * 100).toFixed(0)}% of the dataset held resident`;
      sigmaSource = `fitted with B_storage: the cold mode and the overlap probe (cold, ${held})`;
      storageBytesPerSec = (profiledRanks * readAmplification * bytesPerSample) / fitted.fetchSec;
      storageSource = `fitted with σ: the cold mode and the overlap probe (the cold mode read ${formatRate(cold.storageReadBytesPerSec)})`;
    }
  }
  if (!overlapMeasured) sigmaSource += '; assumed: not measured (profile --overlap measures it)';
  const serialUpperBound = overlapMeasured
    ? fetchPrepSerial
    : (fitOverlap({
        ...atProfile,
        fetchSec: (profiledRanks * readAmplification * bytesPerSample) / storageBytesPerSec,
        // The upper end of the cold mode's 95% interval: the most σ it allows.
        coldSec: atProfile.coldSec + (cold.summary.iterMs.halfWidth ?? 0) / 1000 / cold.summary.samplesPerIter,
      }) ?? 1);
  parameters.push(
    param(
      'B_storage',
      'storage read bandwidth at the job read concurrency',
      storageBytesPerSec,
      'bytes/s',
      storageSource,
      proven(cold),
      storageIsLowerBound ? 'lower bound: storage was not the limit in the cold mode' : undefined,
    ),
    param(
      'σ',
      'share of fetch and prep in series: data time (prep^(1/σ) + fetch^(1/σ))^σ',
      fetchPrepSerial,
      'share',
      sigmaSource,
      proven(syn, cached, cold),
    ),
  );
  if (storageIsLowerBound) caveats.push(MISSING_TEXT.storageLowerBound);

  const memoryRate = profile.analysis?.memoryReadBytesPerSec ?? null;
  if (memoryRate !== null) {
    parameters.push(
      param(
        'B_memory',
        'page-cache read rate reached (hits cost CPU time, counted in u)',
        memoryRate,
        'bytes/s',
        'analysis.memoryReadBytesPerSec (cached mode)',
        proven(cached),
        'lower bound, not used as a stage',
      ),
    );
  }

  const { bytes: datasetBytes, files: datasetFiles } = profile.dataset;
  if (!(datasetBytes > 0) || !(datasetFiles > 0)) throw missing('dataset.bytes', 'cold');
  const samplesPerEpoch = datasetBytes / bytesPerSample;
  parameters.push(
    param('D', 'dataset size', datasetBytes, 'bytes', 'dataset.bytes', true),
    param('n', 'files in the dataset', datasetFiles, 'files', 'dataset.files', true),
    param('S', 'samples per epoch', samplesPerEpoch, 'samples', 'D / s', proven(cold)),
  );

  const budget = profile.dataset.memoryBudgetBytes;
  const defaultCacheBytes = budget ?? Math.floor(profile.host.memBytes * FALLBACK_MEMORY_SHARE);
  parameters.push(
    param(
      'M0',
      'cache the page cache could give the dataset when profiled',
      defaultCacheBytes,
      'bytes',
      budget !== undefined && budget !== null ? 'dataset.memoryBudgetBytes (90% of MemAvailable)' : '90% of host.memBytes (profile lacks dataset.memoryBudgetBytes)',
      true,
      budget !== undefined && budget !== null ? undefined : 'assumed',
    ),
  );

  // The LRU curve over the real file count, or a scaled-down dataset with the same size mix.
  const maxItems = options.maxSimulatedItems ?? DEFAULT_MAX_SIMULATED_ITEMS;
  const items = Math.min(datasetFiles, maxItems);
  const histogram = profile.dataset.fileBytesHistogram;
  const sizes = histogram && histogram.buckets.length > 0 ? sizesFromHistogram(histogram, items) : uniformSizes(profile.dataset.meanFileBytes, items);
  if (!histogram) caveats.push(MISSING_TEXT.noHistogram(profile.dataset.meanFileBytes));
  const lruCurve = simulateLruEpochs(sizes, options.simulatedEpochs ?? 3, options.seed ?? 1);
  const lruScale = lruCurve.datasetBytes / datasetBytes;
  parameters.push(
    param(
      'h(M)',
      'page-cache hit ratio curve (LRU, fresh permutation per epoch, bytes-weighted)',
      items,
      'files simulated',
      histogram ? 'dataset.fileBytesHistogram, Mattson stack distances' : 'dataset.meanFileBytes (no histogram), Mattson stack distances',
      true,
      items < datasetFiles ? `scaled from ${datasetFiles} files` : undefined,
    ),
  );
  caveats.push(MISSING_TEXT.lruApproximation);

  return {
    computeSecPerIter,
    samplesPerIter: b,
    profiledRanks,
    prepCpuSecPerSample: u,
    profiledCpus,
    cpuScaling,
    storageBytesPerSec,
    storageIsLowerBound,
    fetchPrepSerial,
    overlapMeasured,
    serialUpperBound,
    readAmplification,
    bytesPerSample,
    datasetBytes,
    datasetFiles,
    samplesPerEpoch,
    defaultCacheBytes,
    lruCurve,
    lruScale,
    parameters,
    caveats,
  };
}

/** The scenario of the profiled machine: default cache, profiled CPUs, measured storage, profiled ranks. */
export function baseScenario(model: FittedModel): Scenario {
  return {
    cacheBytes: model.defaultCacheBytes,
    cpus: model.profiledCpus,
    storageBytesPerSec: model.storageBytesPerSec,
    gpus: model.profiledRanks,
    gpuSpeedup: 1,
    cachePolicy: 'page-cache',
    epochs: null,
  };
}

/** eff(c): linear, or piecewise linear through a fitted sweep (proportional below its first point, last slope beyond its last). */
export function effectiveParallelism(scaling: CpuScaling, cpus: number): number {
  if (scaling.kind === 'linear') return scaling.perCpu * cpus;
  const pts = scaling.points;
  if (pts.length === 0) return cpus;
  if (cpus <= pts[0].cpus) return (pts[0].eff * cpus) / pts[0].cpus;
  for (let k = 1; k < pts.length; k++) {
    if (cpus <= pts[k].cpus) {
      const f = (cpus - pts[k - 1].cpus) / (pts[k].cpus - pts[k - 1].cpus);
      return pts[k - 1].eff + f * (pts[k].eff - pts[k - 1].eff);
    }
  }
  const last = pts[pts.length - 1];
  const prev = pts.length > 1 ? pts[pts.length - 2] : { cpus: 0, eff: 0 };
  const slope = Math.max(0, (last.eff - prev.eff) / (last.cpus - prev.cpus));
  return last.eff + slope * (cpus - last.cpus);
}

/** Steady-state hit ratio (epoch 2 on) of `policy` for a cache of `cacheBytes`. */
export function steadyHitRatio(model: FittedModel, policy: CachePolicy, cacheBytes: number): number {
  if (policy === 'minio') return minioHitRatio(cacheBytes, model.datasetBytes);
  return steadyLruHitRatio(model.lruCurve, cacheBytes * model.lruScale);
}

/** Seconds per sample of each stage, per rank, for a hit ratio h. */
export function stageTimes(model: FittedModel, scenario: Scenario, hitRatio: number): { gpu: number; prep: number; fetch: number } {
  const n = scenario.gpus;
  const gpu = model.computeSecPerIter / model.samplesPerIter / scenario.gpuSpeedup;
  const eff = effectiveParallelism(model.cpuScaling, scenario.cpus);
  const prep = model.prepCpuSecPerSample === 0 ? 0 : eff > 0 ? (n * model.prepCpuSecPerSample) / eff : Infinity;
  const fetch = (n * (1 - hitRatio) * model.readAmplification * model.bytesPerSample) / scenario.storageBytesPerSec;
  return { gpu, prep, fetch };
}

/** Predicts one scenario. Pure. */
export function predict(model: FittedModel, scenario: Scenario): Prediction {
  const steady = steadyHitRatio(model, scenario.cachePolicy, scenario.cacheBytes);
  const perSample = (h: number): number => {
    const t = stageTimes(model, scenario, h);
    return Math.max(t.gpu, dataTime(t.prep, t.fetch, model.fetchPrepSerial));
  };
  const firstSec = perSample(0);
  const steadySec = perSample(steady);
  const epochs = scenario.epochs;
  // Mean time per sample over the job: the first epoch is always cold (an
  // empty cache sees no re-reference within one permutation), the rest steady.
  const meanSec = epochs === null ? steadySec : (firstSec + (epochs - 1) * steadySec) / epochs;
  const hitRatio = epochs === null ? steady : (steady * (epochs - 1)) / epochs;
  // Stage split at the averaged pace: fetch carries the difference between epochs.
  const t = stageTimes(model, scenario, steady);
  const b = model.samplesPerIter;
  const dataPace = Math.max(t.gpu, t.prep);
  const iterSec = meanSec * b;
  const bottleneck: Bottleneck = meanSec > dataPace * (1 + NEGLIGIBLE_FETCH_STALL) ? 'fetch' : t.prep > t.gpu * (1 + 1e-9) ? 'prep' : 'compute';
  const samplesPerSec = scenario.gpus / meanSec;
  const epochSecAt = (secPerSample: number): number => (model.samplesPerEpoch * secPerSample) / scenario.gpus;
  return {
    scenario,
    steadyHitRatio: steady,
    hitRatio,
    computeMs: t.gpu * b * 1000,
    prepStallMs: (dataPace - t.gpu) * b * 1000,
    fetchStallMs: Math.max(0, meanSec - dataPace) * b * 1000,
    iterMs: iterSec * 1000,
    samplesPerSec,
    epochSec: epochSecAt(meanSec),
    firstEpochSec: epochSecAt(firstSec),
    steadyEpochSec: epochSecAt(steadySec),
    acceleratorUtilization: t.gpu / meanSec,
    bottleneck,
    basis: epochs === null ? 'steady state (epoch 2 on)' : `mean over ${epochs} epochs, the first cold`,
  };
}

/** The model at the profiled settings, against each measured mode: it reproduces them by construction, up to noise. */
export function selfCheck(model: FittedModel, profile: Profile): { mode: Mode; measuredIterMs: number; predictedIterMs: number }[] {
  const base = { ...baseScenario(model), epochs: null };
  const out: { mode: Mode; measuredIterMs: number; predictedIterMs: number }[] = [];
  const at = (h: number, withPrep: boolean): number => {
    const t = stageTimes(model, base, h);
    return Math.max(t.gpu, dataTime(withPrep ? t.prep : 0, h < 1 ? t.fetch : 0, model.fetchPrepSerial)) * model.samplesPerIter * 1000;
  };
  const push = (mode: Mode, predictedIterMs: number): void => {
    const m = profile.modes[mode]?.summary;
    if (m) out.push({ mode, measuredIterMs: m.iterMs.mean, predictedIterMs });
  };
  push('synthetic', at(1, false));
  push('cached', at(1, true));
  push('cold', at(0, true));
  return out;
}

function param(symbol: string, name: string, value: number, unit: string, source: string, proven: boolean, note?: string): ModelParameter {
  return note === undefined ? { symbol, name, value, unit, source, proven } : { symbol, name, value, unit, source, proven, note };
}

function need(profile: Profile, mode: Mode): Usable {
  const result = profile.modes[mode];
  if (!result) throw missing(`modes.${mode}`, mode);
  if (result.summary === null) throw missing(`modes.${mode}.summary`, mode);
  return result as Usable;
}

function missing(field: string, mode: Mode): UserError {
  return new UserError(MISSING_TEXT.field(field, mode), ExitCode.MissingInput);
}

/** Whether mode `slow` is really slower than `fast`: 95% CIs apart and by a visible share. */
function realStall(slow: IterationSummary, fast: IterationSummary): boolean {
  const diff = slow.iterMs.mean - fast.iterMs.mean;
  const half = Math.hypot(slow.iterMs.halfWidth ?? 0, fast.iterMs.halfWidth ?? 0);
  return diff > half && diff > REAL_STALL_SHARE * slow.iterMs.mean;
}

