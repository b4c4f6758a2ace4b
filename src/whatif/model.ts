/**
 * The what-if model: fitted from what a profile measured, then asked about other cache sizes, CPU counts, storage
 * bandwidths, accelerator counts and accelerator speeds. After DS-Analyzer (Mohan et al., "Analyzing and Mitigating
 * Data Stalls in DNN Training", VLDB 2021, section 4.2). The formula, its terms and what each is fitted from are
 * written once, in docs/whatif.md ("The model"); `predict` and `dataSec` below compute it.
 *
 * Capacities, not paces; hits as the job's CPU time; N ranks sharing one permutation: docs/whatif.md ("Capacities,
 * not paces" and the list after it). What rests on an assumption is a range (./assumptions.ts).
 */
import type { z } from 'zod';
import { steadyProfile } from '../analysis/step-events.js';
import type { PredictionSchema } from '../schema/whatif-output.js';
import type { Mode } from '../schema/events.js';
import type { Profile } from '../schema/profile.js';
import type { CachePolicy } from './cache-policy.js';
import { effectiveParallelism, type CpuScaling } from './cpu-scaling.js';
import { minioHitRatio } from './hit-ratio.js';
import { dataTime } from './overlap.js';
import { fitAccelerator, type AcceleratorFit } from './fit/accelerator.js';
import { assumptionsOf, type Assumption } from './fit/assumptions-of.js';
import { fitCpuShare, type CpuShareFit } from './fit/cpu-share.js';
import { fitCache, type CacheFit, type CacheFitOptions } from './fit/cache.js';
import { measuredModes } from './fit/modes.js';
import { fitPrepCpu, type PrepCpuFit, type PrepCpuOptions } from './fit/prep-cpu.js';
import { fitLoaderWorkers, profiledCpusOf, workersParallelism, type LoaderWorkersFit } from './fit/loader-workers.js';
import { fitSampleBytes, type SampleBytesFit } from './fit/sample-bytes.js';
import { fitStorage, type StorageFit } from './fit/storage.js';
import type { Fitted, ModelParameter, NotEnoughData } from './fit/fitted.js';
import { MISSING_TEXT } from './advice-text.js';
import { fitFirstBatch, type FirstBatchFit } from './fit/first-batch.js';
import { fitRemoteRequests, type RemoteRequestsFit } from './fit/remote-requests.js';
import {
  ONE_JOB,
  baseScenario,
  jobShare,
  scenarioNodes,
  scenarioWorkers,
  type JobShare,
  type Scenario,
} from './scenario.js';

export type { CpuScaling } from './cpu-scaling.js';
export { isNotEnoughData, type ModelParameter, type NotEnoughData } from './fit/fitted.js';

/**
 * A fetch stall within 2% of the pace counts as none: inside the noise of a measured iteration time. With fetch and
 * prep partly in series any fetch adds a little time, which should not make the job "fetch-bound".
 */
export const NEGLIGIBLE_FETCH_STALL = 0.02;

export type { CachePolicy };
export { baseScenario, scenarioWorkers, type Scenario } from './scenario.js';

/** What limits the pace: the stage with the largest time per sample. */
export type Bottleneck = Prediction['bottleneck'];

/**
 * The model fitted from one profile: the values of every fitter under fit/ (each field documented there), with their
 * parameter rows and caveats. Values in SI units (seconds, bytes).
 */
export interface FittedModel
  extends AcceleratorFit,
    CpuShareFit,
    Omit<PrepCpuFit, 'cachedTime'>,
    LoaderWorkersFit,
    SampleBytesFit,
    StorageFit,
    CacheFit,
    RemoteRequestsFit,
    FirstBatchFit {
  /** Every parameter with its source, for the report. */
  parameters: ModelParameter[];
  /** The values no measurement pinned, each with its pessimistic and optimistic end (./fit/assumptions-of.ts). */
  assumptions: Assumption[];
  /** Assumptions and limits of this fit. */
  caveats: string[];
  /**
   * What the fetch stage lacks (a profile without the cold mode, or one whose cold mode read nothing from storage),
   * where fitModel was asked to fit without it (FitOptions.fetchOptional): reads are then taken never to wait (as in
   * the cached mode) and the cache and storage questions are not answered; null when the fetch stage was fitted.
   */
  fetchUnmeasured: NotEnoughData | null;
}

/** What the model predicts for a scenario. Times per rank; rates for the whole server. */
export type Prediction = z.infer<typeof PredictionSchema>;

/**
 * Options of fitModel: a caller's CPU curve (fit/prep-cpu.ts), how the LRU curve is simulated (fit/cache.ts), and
 * whether a profile without the fetch stage's measurements is fitted anyway (fetchOptional: compute and prep alone,
 * FittedModel.fetchUnmeasured saying what is missing) instead of answered with not-enough-data.
 */
export type FitOptions = PrepCpuOptions & CacheFitOptions & { fetchOptional?: boolean };

/** The fetch stage where nothing measured it: reads never wait (fetchUnmeasured says why). */
const UNMEASURED_STORAGE: StorageFit = {
  storageBytesPerSec: 0,
  storageIsLowerBound: false,
  fetchPrepSerial: 0,
  overlapMeasured: true,
  serialUpperBound: 0,
};

/** What fitModel answers: the model, or what the profile lacks for it. */
export type ModelFit = { kind: 'fitted'; model: FittedModel } | NotEnoughData;

/**
 * Fits the model to a profile by composing one fitter per parameter group (src/whatif/fit/), each returning its values,
 * its parameter rows and its caveats. Needs all three modes (each prediction is a max over compute, prep and fetch): a
 * profile lacking one, or a measurement a fitter needs, is answered with not-enough-data naming the field and how to
 * measure it, never thrown; the command decides what that means (whatif: exit code 4). Pure and deterministic (the
 * simulated epoch orders are seeded).
 */
export function fitModel(measuredProfile: Profile, options: FitOptions = {}): ModelFit {
  // Steady rates: saves inside steps and epoch starts are stalls of their own (whatif/pipeline-stalls.ts).
  const profile = steadyProfile(measuredProfile);
  const modes = measuredModes(profile);
  if (modes.kind === 'not-enough-data') return modes;
  const accelerator = fitAccelerator(modes.value);
  if (accelerator.kind === 'not-enough-data') return accelerator;
  const { computeSecPerIter, samplesPerIter, profiledRanks } = accelerator.value;
  const cpuShare = fitCpuShare(profile, modes.value, profiledCpusOf(profile, modes.value.cached));
  const prep = fitPrepCpu(profile, modes.value, profiledRanks, cpuShare.value.stepCpuSecPerSample, options);
  if (prep.kind === 'not-enough-data') return prep;
  const { prepCpuSecPerSample, profiledCpus, cpuScaling, cpuShareAssumed, cachedTime } = prep.value;
  const workers = fitLoaderWorkers(profile, modes.value, profiledRanks, prepCpuSecPerSample, cachedTime);
  const bytes = fitSampleBytes(profile, modes.value);
  const { bytesPerSample, readAmplification } = bytes.value;
  const profiledPrep = profiledPrepSec(
    profiledRanks,
    prepCpuSecPerSample,
    cpuShare.value.stepCpuSecPerSample,
    cpuScaling,
    profiledCpus,
    workers.value,
  );
  const stepSec =
    (computeSecPerIter + besideLoaderSecPerIter(workers.value, workers.value.profiledWorkers)) / samplesPerIter;
  const requests = fitRemoteRequests(profile, modes.value, profiledRanks, workers.value.profiledWorkers);
  const storage = fitStorage(profile, modes.value, {
    requestPaced: requests.value.requestLatencySec > 0,
    // What reads can hide behind: the step and the pace prep sets; what they can run in series with: the loader's own
    // prep (dataSec).
    computeSec: Math.max(stepSec, profiledPrep.pace),
    prepSec: profiledPrep.inSeries,
    missBytesPerSample: profiledRanks * readAmplification * bytesPerSample,
    cachedTime,
  });
  if (storage.kind === 'not-enough-data' && !options.fetchOptional) return storage;
  const fetchUnmeasured = storage.kind === 'not-enough-data' ? storage : null;
  const storageFit: Fitted<StorageFit> =
    storage.kind === 'fitted'
      ? storage
      : { kind: 'fitted', value: UNMEASURED_STORAGE, parameters: [], caveats: [MISSING_TEXT.fetchUnmeasured(storage)] };
  const cache = fitCache(profile, modes.value, bytesPerSample, options);
  if (cache.kind === 'not-enough-data') return cache;
  // The first batch's fetch is a storage read too: not modelled without the storage.
  const firstBatch = fetchUnmeasured
    ? { kind: 'fitted' as const, value: { firstBatch: null }, parameters: [], caveats: [] }
    : fitFirstBatch(modes.value);
  // The report lists parameters and caveats in this order.
  const fits = [modes, accelerator, cpuShare, prep, workers, bytes, storageFit, requests, cache, firstBatch];
  const fitted = {
    ...accelerator.value,
    ...cpuShare.value,
    prepCpuSecPerSample,
    profiledCpus,
    cpuScaling,
    cpuShareAssumed,
    ...workers.value,
    ...storageFit.value,
    ...bytes.value,
    // Without the storage a miss's read is not modelled: no read amplification to assume either.
    ...(fetchUnmeasured ? { readAmplification: 1 } : {}),
    ...cache.value,
    ...requests.value,
    ...firstBatch.value,
    parameters: fits.flatMap((f) => f.parameters),
    caveats: fits.flatMap((f) => f.caveats),
    fetchUnmeasured,
  };
  return { kind: 'fitted', model: { ...fitted, assumptions: assumptionsOf(fitted) } };
}

/**
 * Prep per sample at the profiled settings, s, as prepSec splits it: the fit of storage weighs the cold mode against
 * it.
 */
function profiledPrepSec(
  ranks: number,
  u: number,
  stepCpu: number,
  cpuScaling: CpuScaling,
  cpus: number,
  workers: LoaderWorkersFit,
): { pace: number; inSeries: number } {
  const cpu = cpuCapSec(ranks, u, stepCpu, cpuScaling, cpus);
  if (workers.profiledWorkers === null || workers.profiledWorkers === 0) return { pace: cpu, inSeries: cpu };
  const loader = (ranks * u) / workersParallelism(workers, workers.profiledWorkers);
  return { pace: Math.max(cpu, loader), inSeries: loader };
}

/** Steady-state hit ratio (epoch 2 on) of `policy` for a cache of `cacheBytes`. */
export function steadyHitRatio(model: FittedModel, policy: CachePolicy, cacheBytes: number): number {
  if (policy === 'minio') return minioHitRatio(cacheBytes, model.datasetBytes);
  return model.pageCache.steady(cacheBytes);
}

/**
 * The steady hit ratio of a scenario's cache: its policy on one node's cache; partitioned over N nodes, a sample is
 * cached somewhere while the N caches together hold it (min(1, N M / D), none evicting), on this node for 1 in N.
 */
export function scenarioHitRatio(model: FittedModel, scenario: Scenario): number {
  if (scenario.partitioned && scenarioNodes(scenario) > 1)
    return minioHitRatio(scenarioNodes(scenario) * scenario.cacheBytes, model.datasetBytes);
  return steadyHitRatio(model, scenario.cachePolicy, scenario.cacheBytes);
}

/**
 * Seconds per sample the CPUs need for N ranks' CPU work: with a fitted CPU curve, prep over what the sweep measured c
 * CPUs give (the step's share was in that run); with linear scaling, prep and the step's own CPU (less with a faster
 * accelerator: k_s / X) over e * c. A step that runs on the CPU shares the CPUs with prep, rather than holding a whole
 * CPU off the top.
 */
function cpuCapSec(
  ranks: number,
  u: number,
  stepCpuSec: number,
  scaling: CpuScaling,
  cpus: number,
  share: JobShare = ONE_JOB,
): number {
  // K jobs: each rank's steps K times over; their prep K times, or once where the jobs share it (coordinated). A fitted
  // curve holds one job's steps already: only the other jobs' are added.
  const steps = scaling.kind === 'fitted' ? (share.stepCopies - 1) * stepCpuSec : share.stepCopies * stepCpuSec;
  const work = ranks * (share.prepCopies * u + steps);
  if (work === 0) return 0;
  const eff = effectiveParallelism(scaling, cpus);
  return eff > 0 ? work / eff : Infinity;
}

/**
 * Prep per sample and rank, s: the slower of what the loader workers give (eff_w(W), each one CPU at most) and what the
 * CPUs give. W = 0 loads in each training process, in series with its step: the prep there is the measured serial time
 * (a sweep at 0), else u at what one CPU gives; the CPUs cap step and prep together.
 */
function prepSec(model: FittedModel, scenario: Scenario, gpuSec: number): { pace: number; inSeries: number } {
  const prepSpeedup = scenario.prepSpeedup ?? 1;
  const u = model.prepCpuSecPerSample / prepSpeedup;
  const workers = scenarioWorkers(model, scenario);
  const cpu = cpuCapSec(
    scenario.gpus,
    u,
    model.stepCpuSecPerSample / scenario.gpuSpeedup,
    model.cpuScaling,
    scenario.cpus,
    jobShare(scenario),
  );
  if (workers === 0) {
    // One process a rank, each at most one CPU, and no more than the CPUs give it.
    const serial =
      model.serialPrepSecPerSample !== null
        ? model.serialPrepSecPerSample / prepSpeedup
        : u / Math.min(1, effectiveParallelism(model.cpuScaling, scenario.cpus) / scenario.gpus);
    const pace = Math.max(serial, cpu - gpuSec);
    return { pace, inSeries: pace };
  }
  if (workers === null) return { pace: cpu, inSeries: cpu };
  const loader =
    u === 0 ? 0 : (scenario.gpus * u) / ((scenario.gpus / model.profiledRanks) * workersParallelism(model, workers));
  // A worker reads, then pre-processes: its reads can be in series with its own prep, not with the CPUs' cap (a read
  // takes no CPU).
  return { pace: Math.max(loader, cpu), inSeries: loader };
}

/**
 * Data time per sample with `fetchSec` of reads: the pace prep sets, and the reads combined with the prep that can run
 * in series with them (../overlap.ts). With loader workers that is each worker's own prep, not the cap the CPUs set on
 * prep and the step together: a CPU-trained step's share of the CPUs never waits for a read.
 */
export function dataSec(model: FittedModel, t: { prep: number; prepInSeries: number }, fetchSec: number): number {
  return Math.max(t.prep, dataTime(t.prepInSeries, fetchSec, model.fetchPrepSerial));
}

/**
 * What the step pays per iteration beside loader workers: the hand-over and its slow-down from sharing cores with them;
 * loading in series (W = 0), neither.
 */
function besideLoaderSecPerIter(
  fit: Pick<LoaderWorkersFit, 'handoverSecPerIter' | 'contentionSecPerIter'>,
  workers: number | null,
): number {
  return workers === 0 ? 0 : fit.handoverSecPerIter + fit.contentionSecPerIter;
}

/**
 * Seconds per sample of each stage, per rank, for a hit ratio h. `step` is what the training process does in series per
 * sample: its compute, taking each ready batch from its loader workers and the compute's slow-down beside them (none
 * without workers).
 */
export function stageTimes(
  model: FittedModel,
  scenario: Scenario,
  hitRatio: number,
): { gpu: number; step: number; prep: number; prepInSeries: number; fetch: number } {
  const n = scenario.gpus;
  const gpu = model.computeSecPerIter / model.samplesPerIter / scenario.gpuSpeedup;
  const step = gpu + besideLoaderSecPerIter(model, scenarioWorkers(model, scenario)) / model.samplesPerIter;
  // Each remote request waits for its first byte, then its bytes share the bandwidth: the two add up (0 latency for
  // local files). K independent jobs each read what they miss; coordinated ones read it once for all (the same cache
  // hit ratio: see whatif.ts).
  const reads = jobShare(scenario).prepCopies;
  const fetch = model.fetchUnmeasured
    ? 0
    : (reads * n * (1 - hitRatio) * model.readAmplification * model.bytesPerSample) / scenario.storageBytesPerSec +
      (1 - hitRatio) * requestWaitSec(model, scenario) +
      peerFetchSec(model, scenario, hitRatio, reads * n);
  const prep = prepSec(model, scenario, gpu);
  return { gpu, step, prep: prep.pace, prepInSeries: prep.inSeries, fetch };
}

/**
 * A partitioned cache's hits held by another node, s per sample: (N - 1) / N of them come over the network between the
 * nodes, a sample's bytes each (a cached sample, no read amplification); 0 without a partitioned cache.
 */
function peerFetchSec(model: FittedModel, scenario: Scenario, hitRatio: number, readers: number): number {
  const nodes = scenarioNodes(scenario);
  if (!scenario.partitioned || nodes < 2 || !scenario.peerBytesPerSec) return 0;
  return (readers * hitRatio * ((nodes - 1) / nodes) * model.bytesPerSample) / scenario.peerBytesPerSec;
}

/**
 * Remote data: the time per sample its requests spend waiting for their first byte, r L / (W q), where each of a rank's
 * W loader workers (1 without) keeps q requests in flight; 0 for local files. Many requests in flight hide it, down to
 * the bandwidth term beside it (stageTimes).
 */
export function requestWaitSec(model: FittedModel, scenario: Scenario): number {
  // No request was seen (local files, HTTPS tunnels): there is no request term to change.
  if (model.profiledInFlightPerWorker === null) return 0;
  const latency = scenario.requestLatencySec ?? model.requestLatencySec;
  if (latency === 0) return 0;
  const loaders = Math.max(1, scenarioWorkers(model, scenario) ?? 1);
  const inFlight = scenario.inFlightPerWorker ?? model.profiledInFlightPerWorker;
  return (requestsPerSample(model, scenario) * latency) / (loaders * inFlight);
}

/**
 * Requests a sample needs, r: as profiled, or one per object of the scenario's size (a sample's bytes over the
 * object's).
 */
export function requestsPerSample(model: FittedModel, scenario: Scenario): number {
  return scenario.objectBytes ? model.bytesPerSample / scenario.objectBytes : model.requestsPerSample;
}

/** Bytes of one object as profiled: a sample's bytes over the requests it needs. */
export function profiledObjectBytes(model: FittedModel): number {
  return model.bytesPerSample / model.requestsPerSample;
}

/**
 * Fetching the first batches, s: every loader (ranks x workers) fetches its first batch at once, so their bytes share
 * the bandwidth; each worker's requests for it wait L each, q at a time, one request at least (a shard's first samples
 * come with its first request).
 */
export function firstBatchFetchSec(model: FittedModel, scenario: Scenario): number {
  const loaders = scenario.gpus * Math.max(1, scenarioWorkers(model, scenario) ?? 1);
  const b = model.samplesPerIter;
  const bandwidth = (loaders * b * model.readAmplification * model.bytesPerSample) / scenario.storageBytesPerSec;
  if (model.profiledInFlightPerWorker === null) return bandwidth;
  const inFlight = scenario.inFlightPerWorker ?? model.profiledInFlightPerWorker;
  const rounds = Math.max(1, Math.ceil((b * requestsPerSample(model, scenario)) / inFlight - 1e-9));
  return bandwidth + rounds * (scenario.requestLatencySec ?? model.requestLatencySec);
}

/**
 * Seconds from the job's start to its first batch with nothing cached: its start-up and the loader's first wait in
 * memory as measured, plus the first batch's fetch, modelled at the asked settings and corrected by what the model
 * missed at the profiled ones (the measured cold wait less the cached, less the modelled fetch: connections opened,
 * listings, a worker's first request).
 */
export function firstBatchSec(model: FittedModel, scenario: Scenario): number {
  const measured = model.firstBatch!;
  const residual =
    measured.coldFirstWaitSec - measured.cachedFirstWaitSec - firstBatchFetchSec(model, baseScenario(model));
  return (
    measured.startupSec + measured.cachedFirstWaitSec + Math.max(0, firstBatchFetchSec(model, scenario) + residual)
  );
}

/** Predicts one scenario. Pure. */
export function predict(model: FittedModel, scenario: Scenario): Prediction {
  const steady = scenarioHitRatio(model, scenario);
  // Without loader workers the training process loads each batch itself, then steps: the stages add up.
  const inSeries = scenarioWorkers(model, scenario) === 0;
  const perSample = (h: number): number => {
    const t = stageTimes(model, scenario, h);
    return inSeries ? t.gpu + t.prep + t.fetch : Math.max(t.step, dataSec(model, t, t.fetch));
  };
  const firstSec = perSample(0);
  const steadySec = perSample(steady);
  const epochs = scenario.epochs;
  // Mean time per sample over the job: the first epoch is always cold (an empty cache sees no re-reference within one
  // permutation), the rest steady.
  const meanSec = epochs === null ? steadySec : (firstSec + (epochs - 1) * steadySec) / epochs;
  const hitRatio = epochs === null ? steady : (steady * (epochs - 1)) / epochs;
  // Stage split at the averaged pace: fetch carries the difference between epochs.
  const t = stageTimes(model, scenario, steady);
  const b = model.samplesPerIter;
  const dataPace = inSeries ? t.gpu + t.prep : Math.max(t.step, t.prep);
  const iterSec = meanSec * b;
  const prepShows = inSeries ? t.prep > t.gpu * 1e-9 : t.prep > t.step * (1 + 1e-9);
  const fetchShows = meanSec > dataPace * (1 + NEGLIGIBLE_FETCH_STALL);
  const prepStallSec = dataPace - t.gpu;
  const fetchStallSec = Math.max(0, meanSec - dataPace);
  // The bottleneck named is the largest stall that shows (issue 42): a fetch stall smaller than the prep stall beside
  // it is not the limit (fetchStalls says whether one shows at all).
  const bottleneck: Bottleneck =
    fetchShows && (!prepShows || fetchStallSec >= prepStallSec) ? 'fetch' : prepShows ? 'prep' : 'compute';
  // Every job's and every node's ranks together: K jobs each train at this pace, N nodes each on their share of every
  // epoch.
  const samplesPerSec = (Math.max(1, scenario.jobs ?? 1) * scenarioNodes(scenario) * scenario.gpus) / meanSec;
  const epochSecAt = (secPerSample: number): number =>
    (model.samplesPerEpoch * secPerSample) / (scenario.gpus * scenarioNodes(scenario));
  return {
    scenario,
    steadyHitRatio: steady,
    hitRatio,
    computeMs: t.gpu * b * 1000,
    prepStallMs: prepStallSec * b * 1000,
    fetchStallMs: fetchStallSec * b * 1000,
    iterMs: iterSec * 1000,
    samplesPerSec,
    epochSec: epochSecAt(meanSec),
    firstEpochSec: epochSecAt(firstSec),
    ...(model.firstBatch ? { firstBatchSec: firstBatchSec(model, scenario) } : {}),
    steadyEpochSec: epochSecAt(steadySec),
    acceleratorUtilization: t.gpu / meanSec,
    bottleneck,
    basis: epochs === null ? 'steady state (epoch 2 on)' : `mean over ${epochs} epochs, the first cold`,
  };
}

/**
 * The model at the profiled settings, against each measured mode's steady pace: it reproduces them by construction, up
 * to noise.
 */
export function selfCheck(
  model: FittedModel,
  profile: Profile,
): { mode: Mode; measuredIterMs: number; predictedIterMs: number }[] {
  const base = { ...baseScenario(model), epochs: null };
  const out: { mode: Mode; measuredIterMs: number; predictedIterMs: number }[] = [];
  const at = (h: number, withPrep: boolean): number => {
    const t = stageTimes(model, base, h);
    // num_workers=0: the step and the loading add up, as predict() has them.
    if (withPrep && scenarioWorkers(model, base) === 0)
      return (t.gpu + t.prep + (h < 1 ? t.fetch : 0)) * model.samplesPerIter * 1000;
    const data = withPrep ? dataSec(model, t, h < 1 ? t.fetch : 0) : h < 1 ? t.fetch : 0;
    return Math.max(withPrep ? t.step : t.gpu, data) * model.samplesPerIter * 1000;
  };
  const steady = steadyProfile(profile);
  const push = (mode: Mode, predictedIterMs: number): void => {
    const m = steady.modes[mode]?.summary;
    if (m) out.push({ mode, measuredIterMs: m.iterMs.mean, predictedIterMs });
  };
  push('synthetic', at(1, false));
  push('cached', at(1, true));
  push('cold', at(0, true));
  return out;
}
