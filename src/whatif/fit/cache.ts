/**
 * The cache: the dataset it holds (D, n, samples per epoch), the cache the
 * profiled host could give it (M0), the LRU hit-ratio curve h(M) simulated
 * over the dataset's file sizes (../hit-ratio.ts), and the memory rate the
 * cached mode reached, shown only: a page-cache hit is a copy, CPU time of
 * the job, which u already holds.
 */
import type { Profile } from '../../schema/profile.js';
import { MISSING_TEXT } from '../advice-text.js';
import { simulateLruEpochs, type HitRatioCurve } from '../hit-ratio.js';
import { sizesFromHistogram, uniformSizes } from '../size-distribution.js';
import { notEnoughData, parameter, type Fitted, type ModelParameter, type NotEnoughData } from './fitted.js';
import { proven, type MeasuredModes } from './modes.js';

/** Simulating 100k files x 3 epochs takes ~0.1 s; the steady hit ratio then varies by < 0.2% between seeds. */
export const DEFAULT_MAX_SIMULATED_ITEMS = 100_000;
/** Fallback page-cache share of host memory when the profile does not record the budget. */
const FALLBACK_MEMORY_SHARE = 0.9;

/** The dataset and its cache as fitted. */
export interface CacheFit {
  /** Dataset bytes, D. */
  datasetBytes: number;
  /** Dataset files, n. */
  datasetFiles: number;
  /** Samples per epoch (D / s). */
  samplesPerEpoch: number;
  /** Cache size assumed when none is asked: what the page cache could give the dataset when profiled, bytes. */
  defaultCacheBytes: number;
  /** LRU hit-ratio curve of the simulated (possibly scaled-down) dataset. */
  lruCurve: HitRatioCurve;
  /** Simulated bytes per real byte: cache sizes are scaled by this before querying lruCurve. */
  lruScale: number;
}

/** Options of the cache fit. */
export interface CacheFitOptions {
  /** Most files simulated for the LRU curve; larger datasets are scaled down (hit ratios depend on M/D). */
  maxSimulatedItems?: number;
  /** Epochs simulated (the first is cold; the rest are averaged for the steady state). */
  simulatedEpochs?: number;
  /** Seed of the simulated epoch orders. */
  seed?: number;
}

/** The cache's parameters for samples of `bytesPerSample`; not enough data without the dataset's size. */
export function fitCache(profile: Profile, modes: MeasuredModes, bytesPerSample: number, options: CacheFitOptions = {}): Fitted<CacheFit> | NotEnoughData {
  const { bytes: datasetBytes, files: datasetFiles } = profile.dataset;
  if (!(datasetBytes > 0) || !(datasetFiles > 0)) return notEnoughData('dataset.bytes', 'cold');
  const samplesPerEpoch = datasetBytes / bytesPerSample;
  const m0 = profiledCacheBytes(profile);
  const defaultCacheBytes = m0.bytes;
  const lru = lruCurve(profile, options);
  const lruScale = lru.value.datasetBytes / datasetBytes;
  return {
    kind: 'fitted',
    value: { datasetBytes, datasetFiles, samplesPerEpoch, defaultCacheBytes, lruCurve: lru.value, lruScale },
    parameters: [
      ...memoryRate(profile, modes),
      parameter('D', 'dataset size', datasetBytes, 'bytes', 'dataset.bytes', true),
      parameter('n', 'files in the dataset', datasetFiles, 'files', 'dataset.files', true),
      parameter('S', 'samples per epoch', samplesPerEpoch, 'samples', 'D / s', proven(modes.cold ?? modes.cached)),
      parameter(
        'M0',
        m0.jobCache ? 'local cache of the data the job had when profiled' : 'cache the page cache could give the dataset when profiled',
        defaultCacheBytes,
        'bytes',
        m0.source,
        true,
        m0.assumed ? 'assumed' : undefined,
      ),
      ...lru.parameters,
    ],
    caveats: lru.caveats,
  };
}

/**
 * Remote data's cache as the job runs it, not as the profiler made it: a
 * client that fetches every sample (boto3, requests) keeps no copy, so none;
 * one with a cache folder of its own (--job-cache) keeps what it fetched, up
 * to a limit the profile does not know: taken as what fits in the free space
 * beside the profile. Null for files (the page cache).
 */
function profiledCache(profile: Profile): { bytes: number; source: string; assumed: boolean } | null {
  const remote = profile.dataset.remote;
  if (!remote) return null;
  if (!remote.jobCacheDir) return { bytes: 0, source: 'none: the job fetches every sample (dataset.remote without a jobCacheDir)', assumed: false };
  const bytes = Math.min(profile.dataset.bytes, profile.dataset.memoryBudgetBytes ?? profile.dataset.bytes);
  return { bytes, source: `dataset.remote.jobCacheDir ${remote.jobCacheDir}: its limit is not known, taken as the data or the free space beside the profile`, assumed: true };
}

/**
 * M0: the cache the dataset had as the job ran when profiled, and where the
 * figure comes from. Remote data: the job's own cache (profiledCache); files:
 * the page cache's budget, or 90% of the host's memory where the profile
 * lacks it (assumed).
 */
export function profiledCacheBytes(profile: Profile): { bytes: number; source: string; assumed: boolean; jobCache: boolean } {
  const asProfiled = profiledCache(profile);
  if (asProfiled) return { ...asProfiled, jobCache: true };
  const budget = profile.dataset.memoryBudgetBytes;
  if (budget !== undefined && budget !== null) return { bytes: budget, source: 'dataset.memoryBudgetBytes (90% of MemAvailable)', assumed: false, jobCache: false };
  return {
    bytes: Math.floor(profile.host.memBytes * FALLBACK_MEMORY_SHARE),
    source: '90% of host.memBytes (profile lacks dataset.memoryBudgetBytes)',
    assumed: true,
    jobCache: false,
  };
}

/** B_memory: the page-cache read rate the cached mode reached, a lower bound of memory bandwidth and no stage; none when the analysis did not show it. */
function memoryRate(profile: Profile, modes: MeasuredModes): ModelParameter[] {
  const rate = profile.analysis?.memoryReadBytesPerSec ?? null;
  if (rate === null) return [];
  const name = 'page-cache read rate reached (hits cost CPU time, counted in u)';
  return [parameter('B_memory', name, rate, 'bytes/s', 'analysis.memoryReadBytesPerSec (cached mode)', proven(modes.cached), 'lower bound, not used as a stage')];
}

/**
 * h(M): LRU over the real file count, or over a scaled-down dataset with the
 * same size mix (hit ratios depend on M/D). Without a size histogram every
 * file is the mean size, and the model says so.
 */
function lruCurve(profile: Profile, options: CacheFitOptions): Fitted<HitRatioCurve> {
  const { files, meanFileBytes, fileBytesHistogram: histogram } = profile.dataset;
  const items = Math.min(files, options.maxSimulatedItems ?? DEFAULT_MAX_SIMULATED_ITEMS);
  const sizes = histogram && histogram.buckets.length > 0 ? sizesFromHistogram(histogram, items) : uniformSizes(meanFileBytes, items);
  const curve = simulateLruEpochs(sizes, options.simulatedEpochs ?? 3, options.seed ?? 1);
  return {
    kind: 'fitted',
    value: curve,
    parameters: [
      parameter(
        'h(M)',
        'page-cache hit ratio curve (LRU, fresh permutation per epoch, bytes-weighted)',
        items,
        'files simulated',
        histogram ? 'dataset.fileBytesHistogram, Mattson stack distances' : 'dataset.meanFileBytes (no histogram), Mattson stack distances',
        true,
        items < files ? `scaled from ${files} files` : undefined,
      ),
    ],
    caveats: [...(histogram ? [] : [MISSING_TEXT.noHistogram(meanFileBytes)]), MISSING_TEXT.lruApproximation],
  };
}
