/**
 * The cache: the dataset it holds (D, n, samples per epoch), the cache the profiled host could give it (M0), the
 * hit-ratio curve h(M) simulated over the dataset's file sizes under the policy that holds it (the kernel's two lists,
 * ../kernel-page-cache.ts, or exact LRU, ../hit-ratio.ts), and the memory rate the cached mode reached, shown only: a
 * page-cache hit is a copy, CPU time of the job, which u already holds.
 */
import type { Profile } from '../../schema/profile.js';
import { MISSING_TEXT } from '../advice-text.js';
import { sum } from '../../analysis/stats.js';
import { simulateLruEpochs } from '../hit-ratio.js';
import { kernelPageCache, lruPageCache, type PageCacheCurve, type PageCacheModel } from '../page-cache-curve.js';
import { sizesFromHistogram, uniformSizes } from '../size-distribution.js';
import { notEnoughData, parameter, type Fitted, type ModelParameter, type NotEnoughData } from './fitted.js';
import { proven, type MeasuredModes } from './modes.js';

/** Simulating 100k files x 3 epochs takes ~0.1 s; the steady hit ratio then varies by < 0.2% between seeds. */
export const DEFAULT_MAX_SIMULATED_ITEMS = 100_000;
/**
 * Files the kernel's lists are simulated over: each of 19 cache sizes runs 9 to 25 epochs, and 4 epochs of 2,048 files
 * settle its hit ratio within about 0.005 (hit ratios depend on M/D and the size mix, not the count).
 */
const KERNEL_SIMULATED_ITEMS = 2048;
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
  /** The steady hit ratio by cache size under the policy assumed (pageCachePolicy). */
  pageCache: PageCacheCurve;
  /** The same under exact LRU, for comparison (and the policy where pageCache is LRU). */
  lru: PageCacheCurve;
  /** The policy assumed for the page cache, and why. */
  pageCachePolicy: { model: PageCacheModel; why: string };
}

/** Options of the cache fit. */
export interface CacheFitOptions {
  /** Most files simulated for the LRU curve; larger datasets are scaled down (hit ratios depend on M/D). */
  maxSimulatedItems?: number;
  /** Epochs simulated (the first is cold; the rest are averaged for the steady state). */
  simulatedEpochs?: number;
  /** Seed of the simulated epoch orders. */
  seed?: number;
  /**
   * The page cache's policy, where the caller knows it (validate's cap holds an LRU of closed files); else from the
   * profiled kernel.
   */
  pageCacheModel?: { model: PageCacheModel; why: string };
}

/** The cache's parameters for samples of `bytesPerSample`; not enough data without the dataset's size. */
export function fitCache(
  profile: Profile,
  modes: MeasuredModes,
  bytesPerSample: number,
  options: CacheFitOptions = {},
): Fitted<CacheFit> | NotEnoughData {
  const { bytes: datasetBytes, files: datasetFiles } = profile.dataset;
  if (!(datasetBytes > 0) || !(datasetFiles > 0)) return notEnoughData('dataset.bytes', 'cold');
  const samplesPerEpoch = datasetBytes / bytesPerSample;
  const m0 = profiledCacheBytes(profile);
  const defaultCacheBytes = m0.bytes;
  const curves = hitRatioCurves(profile, options);
  return {
    kind: 'fitted',
    value: { datasetBytes, datasetFiles, samplesPerEpoch, defaultCacheBytes, ...curves.value },
    parameters: [
      ...memoryRate(profile, modes),
      parameter('D', 'dataset size', datasetBytes, 'bytes', 'dataset.bytes', true),
      parameter('n', 'files in the dataset', datasetFiles, 'files', 'dataset.files', true),
      parameter('S', 'samples per epoch', samplesPerEpoch, 'samples', 'D / s', proven(modes.cold ?? modes.cached)),
      parameter(
        'M0',
        m0.jobCache
          ? 'local cache of the data the job had when profiled'
          : 'cache the page cache could give the dataset when profiled',
        defaultCacheBytes,
        'bytes',
        m0.source,
        true,
        m0.assumed ? 'assumed' : undefined,
      ),
      ...curves.parameters,
    ],
    caveats: curves.caveats,
  };
}

/**
 * Remote data's cache as the job runs it, not as the profiler made it: a client that fetches every sample (boto3,
 * requests) keeps no copy, so none; one with a cache folder of its own (--job-cache) keeps what it fetched, up to a
 * limit the profile does not know: taken as what fits in the free space beside the profile. Null for files (the page
 * cache).
 */
function profiledCache(profile: Profile): { bytes: number; source: string; assumed: boolean } | null {
  const remote = profile.dataset.remote;
  if (!remote) return null;
  if (!remote.jobCacheDir)
    return {
      bytes: 0,
      source: 'none: the job fetches every sample (dataset.remote without a jobCacheDir)',
      assumed: false,
    };
  const bytes = Math.min(profile.dataset.bytes, profile.dataset.memoryBudgetBytes ?? profile.dataset.bytes);
  return {
    bytes,
    source:
      `dataset.remote.jobCacheDir ${remote.jobCacheDir}: its limit is not known, taken as the data or the ` +
      `free space beside the profile`,
    assumed: true,
  };
}

/**
 * M0: the cache the dataset had as the job ran when profiled, and where the figure comes from. Remote data: the job's
 * own cache (profiledCache); files: the page cache's budget, or 90% of the host's memory where the profile lacks it
 * (assumed).
 */
export function profiledCacheBytes(profile: Profile): {
  bytes: number;
  source: string;
  assumed: boolean;
  jobCache: boolean;
} {
  const asProfiled = profiledCache(profile);
  if (asProfiled) return { ...asProfiled, jobCache: true };
  const budget = profile.dataset.memoryBudgetBytes;
  if (budget !== undefined && budget !== null)
    return {
      bytes: budget,
      source: 'dataset.memoryBudgetBytes (90% of MemAvailable)',
      assumed: false,
      jobCache: false,
    };
  return {
    bytes: Math.floor(profile.host.memBytes * FALLBACK_MEMORY_SHARE),
    source: '90% of host.memBytes (profile lacks dataset.memoryBudgetBytes)',
    assumed: true,
    jobCache: false,
  };
}

/**
 * B_memory: the page-cache read rate the cached mode reached, a lower bound of memory bandwidth and no stage; none when
 * the analysis did not show it.
 */
function memoryRate(profile: Profile, modes: MeasuredModes): ModelParameter[] {
  const rate = profile.analysis?.memoryReadBytesPerSec ?? null;
  if (rate === null) return [];
  const name = 'page-cache read rate reached (hits cost CPU time, counted in u)';
  return [
    parameter(
      'B_memory',
      name,
      rate,
      'bytes/s',
      'analysis.memoryReadBytesPerSec (cached mode)',
      proven(modes.cached),
      'lower bound, not used as a stage',
    ),
  ];
}

/**
 * The policy the page cache runs: the caller's where it knows; an object cache of the job's own (Streaming, LitData)
 * evicts least recently used; the kernel's classic two lists where the profiled kernel has no multi-generational LRU,
 * or has it off; exact LRU, said to be a stand-in, where it is on (not modelled here).
 */
function pageCachePolicyOf(profile: Profile, options: CacheFitOptions): { model: PageCacheModel; why: string } {
  if (options.pageCacheModel) return options.pageCacheModel;
  if (profile.dataset.remote)
    return { model: 'exact-lru', why: "the job's own cache of objects evicts the least recently used" };
  switch (profile.host.lruGen) {
    case 'on':
      return {
        model: 'exact-lru',
        why: 'the kernel runs the multi-generational LRU (lru_gen on), not simulated: exact LRU stands in',
      };
    case 'off':
    case 'absent':
      return {
        model: 'linux-two-list',
        why: `kernel ${profile.host.kernel} runs the active and inactive lists (lru_gen ${profile.host.lruGen})`,
      };
    default:
      return { model: 'linux-two-list', why: "assumed: the profile does not record the kernel's lru_gen" };
  }
}

const POLICY_NAME: Record<PageCacheModel, string> = {
  'linux-two-list': "Linux's two lists, refaults activated",
  'exact-lru': 'exact LRU',
};

/**
 * h(M), under the policy assumed and under exact LRU: over the real file count, or over a scaled-down dataset with the
 * same size mix (hit ratios depend on M/D). Without a size histogram every file is the mean size, and the model says
 * so.
 */
function hitRatioCurves(
  profile: Profile,
  options: CacheFitOptions,
): Fitted<Pick<CacheFit, 'pageCache' | 'lru' | 'pageCachePolicy'>> {
  const { files, meanFileBytes, fileBytesHistogram: histogram } = profile.dataset;
  const sizesOf = (items: number) =>
    histogram && histogram.buckets.length > 0
      ? sizesFromHistogram(histogram, items)
      : uniformSizes(meanFileBytes, items);
  const lruItems = Math.min(files, options.maxSimulatedItems ?? DEFAULT_MAX_SIMULATED_ITEMS);
  const lruSizes = sizesOf(lruItems);
  const lruCurve = simulateLruEpochs(lruSizes, options.simulatedEpochs ?? 3, options.seed ?? 1);
  const lru = lruPageCache(lruCurve, lruCurve.datasetBytes / profile.dataset.bytes);
  const policy = pageCachePolicyOf(profile, options);
  let pageCache = lru;
  let items = lruItems;
  const other = profile.modes.cold?.state.otherActiveFile;
  if (policy.model === 'linux-two-list') {
    items = Math.min(lruItems, KERNEL_SIMULATED_ITEMS);
    const sizes = items === lruItems ? lruSizes : sizesOf(items);
    pageCache = kernelPageCache(sizes, sum(sizes) / profile.dataset.bytes, options.seed ?? 1, other?.bytes ?? 0);
  }
  return {
    kind: 'fitted',
    value: { pageCache, lru, pageCachePolicy: policy },
    parameters: [
      parameter(
        'h(M)',
        `page-cache hit ratio curve (${POLICY_NAME[policy.model]}, fresh permutation per epoch, bytes-weighted)`,
        items,
        'files simulated',
        (histogram ? 'dataset.fileBytesHistogram' : 'dataset.meanFileBytes (no histogram)') +
          (policy.model === 'exact-lru' ? ', Mattson stack distances' : ', kernel-page-cache.ts'),
        true,
        [...(items < files ? [`scaled from ${files} files`] : []), policy.why].join('; '),
      ),
      ...(policy.model === 'linux-two-list' ? [otherActiveParameter(other)] : []),
    ],
    caveats: [
      ...(histogram ? [] : [MISSING_TEXT.noHistogram(meanFileBytes)]),
      MISSING_TEXT.pageCachePolicy(policy.model),
    ],
  };
}

/**
 * X: other file pages on the active list, which the kernel counts when it balances the lists (a PyTorch job's own
 * libraries held 24-34 MB of a memory group's cache, and took the dataset's hit ratio from 0.115 to 0.055 at a third of
 * it: docs/results.md). As profiled, for any cache asked.
 */
function otherActiveParameter(other: { bytes: number; source: string } | undefined): ModelParameter {
  const name = "other file pages on the active list (the job's libraries, other programs' files), as profiled";
  if (!other)
    return parameter(
      'X',
      name,
      0,
      'bytes',
      'not recorded (a profile before it, or no counter readable): taken as 0',
      false,
      'assumed',
    );
  return parameter(
    'X',
    name,
    other.bytes,
    'bytes',
    `cold state.otherActiveFile (${other.source}, the dataset evicted)`,
    true,
  );
}
