/**
 * Words of the what-if: errors about what a profile lacks, caveats of the fit, and the recommendation sentences. Kept
 * apart from the arithmetic (STYLE.md, "Words").
 */
import type { Mode } from '../schema/events.js';
import { formatBytes, formatRate } from '../units.js';

/** How to measure each mode again. */
const HOW_TO_GET: Record<Mode, string> = {
  synthetic: "re-run 'ds-analyzer profile --modes synthetic,cached,cold ...' (the synthetic mode measures compute)",
  cached:
    "re-run 'ds-analyzer profile' with the cached mode (it measures prep CPU time); it needs a dataset that fits " +
    'in memory',
  cold: "re-run 'ds-analyzer profile' with the cold mode (it measures storage bandwidth)",
};

/** 'a', 'a and b', 'a, b and c'. */
function joinFlags(flags: string[]): string {
  return flags.length <= 1 ? flags.join('') : `${flags.slice(0, -1).join(', ')} and ${flags[flags.length - 1]}`;
}

/** Errors and caveats of the fit. */
export const MISSING_TEXT = {
  field: (field: string, mode: Mode): string =>
    `the profile lacks ${field}, which the what-if model needs: ${HOW_TO_GET[mode]}`,
  fetchUnmeasured: (missing: { missing: string; mode: Mode }): string =>
    `reads are taken never to wait, as in the cached mode: the profile lacks ${missing.missing}, so storage and ` +
    `the cache are not modelled (${HOW_TO_GET[missing.mode]})`,
  notAnswered: (flags: string[], missing: { missing: string; mode: Mode }): string =>
    `not answered: ${joinFlags(flags)} need${flags.length === 1 ? 's' : ''} the ${missing.mode} mode (the profile lacks ${missing.missing}): ${HOW_TO_GET[missing.mode]}`,
  fetchAdviceUnanswered: (missing: { missing: string; mode: Mode }): string =>
    `the cache and storage that would remove a fetch stall need the ${missing.mode} mode (the profile ` +
    `lacks ${missing.missing}): ${HOW_TO_GET[missing.mode]}`,
  unprovenMode: (mode: Mode, reason: string): string =>
    `${mode} mode did not prove its cache state (${reason}): parameters from it are marked unproven`,
  linearScaling:
    'prep rate assumed to scale linearly with CPUs (no CPU sweep in the profile); loader workers, memory ' +
    'bandwidth and the GIL can make it sub-linear',
  storageLowerBound:
    'storage was not the bottleneck in the cold mode and no read probe measured it (an older profile, or the ' +
    'probe was not proven), so its bandwidth is a lower bound (what the job asked for): fetch stalls predicted ' +
    'for faster jobs may be too large; re-profile (its read probe measures the storage) or profile with ' +
    '--storage-bw to pin it',
  noHistogram: (meanBytes: number): string =>
    `the profile has no file-size histogram (dataset.fileBytesHistogram): every file is assumed to ` +
    `be ${formatBytes(meanBytes)}; re-profile to record the distribution`,
  noSaves: (flags: string): string =>
    `${flags} asked, but the profile saw no checkpoint save in any mode: there is no ` +
    'save to change, so the prediction leaves saves out (profile a run that saves, or report its saves as ' +
    'checkpoint events: docs/protocol.md)',
  noEpochStarts: (flags: string): string =>
    `${flags} asked, but the profile saw no epoch start: there is no boundary stall to change, so the prediction ` +
    'leaves it out',
  noRequests: (flag: string): string =>
    `${flag} changes remote requests, and this profile saw none (local files, or HTTPS tunnels): the prediction ` +
    `ignores it (profile --remote over http measures them)`,
  workersUnknown: (workers: number): string =>
    `--workers ${workers} asked, but the job did not report its loader workers (the manual API or a protocol job ` +
    `that leaves them out): the prediction cannot change with them`,
  jobsShareCache: (jobs: number): string =>
    `${jobs} jobs share the cache: each is taken to hit it as one job alone would; jobs reading the same files ` +
    `in other orders re-read each other's pages too, so independent jobs may hit more often than predicted ` +
    `(coordinated ones read each sample once)`,
  nodesAlike: (nodes: number): string =>
    `each of the ${nodes} nodes is taken to run as the profiled machine, its step at the profiled pace: the ` +
    `collectives between nodes (gradients over the network) are not modelled; profile the job on its nodes ` +
    `(docs/multi-node.md) to measure them`,
  severalNodes: (nodes: number): string =>
    `this merged profile ran on ${nodes} nodes, and the model reads it as one server with every rank (their ` +
    `CPUs, cache and storage shared): ` +
    "ask a node's own profile (nodes[].profile) what one node would gain from more CPUs, cache or bandwidth",
  workersCap: (cpus: number, workers: number): string =>
    `${cpus} CPUs asked, but the prediction runs ${workers} loader worker${workers === 1 ? '' : 's'} in all, which cannot use more CPUs than that (whatif --workers N raises them)`,
  pooledCached: (
    cpus: number,
    runs: { mean: number; halfWidth: number | null }[],
    pooledSamplesPerSec: number,
    cachedSamplesPerSec: number,
  ): string =>
    `the cached mode and the CPU sweep measured ${cpus} CPUs ${runs.length} times (${runs
      .map((r) => `${r.mean.toFixed(1)}${r.halfWidth === null ? '' : ` ± ${r.halfWidth.toFixed(1)}`} ms per iteration`)
      .join(
        ', ',
      )}): the model uses their precision-weighted mean, ${pooledSamplesPerSec.toFixed(1)} samples/s (the cached mode alone: ${cachedSamplesPerSec.toFixed(1)})`,
  pageCachePolicy: (model: 'linux-two-list' | 'exact-lru'): string =>
    model === 'linux-two-list'
      ? "page cache simulated as Linux's two lists over whole files, as a job reads them (within 0.03 of the hit " +
        'ratios measured under memory cgroups on four datasets, docs/results.md); the first epoch of a job is ' +
        'always cold'
      : 'page cache modelled as exact LRU over whole files; the first epoch of a job is always cold',
} as const;

/** A change and what it does, for the text of one recommendation. */
export interface RecommendationFacts {
  /** Throughput before, samples/s. */
  fromSamplesPerSec: number;
  /** Throughput after, samples/s. */
  toSamplesPerSec: number;
  /** What limits the pace after the change. */
  bottleneckAfter: string;
  /** Loader workers per rank the change needs, when it raises them. */
  workers?: number;
}

const buys = (f: RecommendationFacts): string => {
  const gain = f.fromSamplesPerSec > 0 ? f.toSamplesPerSec / f.fromSamplesPerSec : 1;
  const how =
    gain > 1.005
      ? `${gain.toFixed(2)}x throughput (${rate(f.fromSamplesPerSec)} -> ${rate(f.toSamplesPerSec)} samples/s)`
      : 'no throughput change';
  return `${how}; then ${f.bottleneckAfter}-bound`;
};
const rate = (s: number): string => (s >= 100 ? s.toFixed(0) : s.toPrecision(3));

/** One sentence per recommendation. */
export const RECOMMENDATION_TEXT = {
  cacheLimitPaste: (bytes: number): string => {
    // Rounded up, in the units both libraries parse.
    const size = bytes >= 1e9 ? `${Math.ceil(bytes / 1e9)}gb` : `${Math.ceil(bytes / 1e6)}mb`;
    return (
      `. Paste: StreamingDataset(..., cache_limit='${size}'), or StreamingDataset(..., ` +
      `max_cache_size='${size}') with LitData`
    );
  },
  cacheNone: (policy: string): string => `${policy}: no fetch stall in the steady state even without a cache`,
  cache: (
    policy: string,
    bytes: number,
    datasetBytes: number,
    f: RecommendationFacts,
    edgeBytes?: number,
    late?: { meanBytes: number; hitByPart: number[] },
  ): string =>
    `${policy}: a cache of ${formatBytes(bytes)} (${((bytes / datasetBytes) * 100).toFixed(0)}% of the dataset) ` +
    `removes the fetch stall from epoch 2 on: ${buys(f)}` +
    (edgeBytes !== undefined && edgeBytes < bytes
      ? ` (the stall returns below ${formatBytes(edgeBytes)}: the hit ratio climbs steeply near there, so this ` +
        `leaves slack)`
      : '') +
    (late
      ? ` (at ${formatBytes(late.meanBytes)} the epoch's mean hit ratio would do, but the misses come late in ` +
        `each epoch: ` +
        `hit ratio by eighth ${late.hitByPart.map((h) => h.toFixed(2)).join(', ')}, and the last eighths would wait on storage)`
      : ''),
  ifSerial: (bytes: number | null, datasetBytes: number, serial: number, validatable: boolean): string =>
    '. This assumes reads overlap pre-processing, which the profile did not measure (profile --overlap measures it); ' +
    `if each loader worker reads and then decodes partly in series (σ up to ${serial.toFixed(2)}, the most the ` +
    `cold mode allows), ` +
    (bytes === null
      ? 'no cache removes the stall'
      : `it takes ${formatBytes(bytes)} (${((bytes / datasetBytes) * 100).toFixed(0)}%)` +
        (validatable ? ": check with 'ds-analyzer validate --cache recommended'" : '')),
  cacheImpossible: (policy: string): string =>
    `${policy}: no cache size removes the fetch stall (even a cache holding the whole dataset leaves a stall)`,
  cpus: (cpus: number, current: number, f: RecommendationFacts): string =>
    cpus <= current
      ? `CPUs: ${cpus} CPU${cpus === 1 ? '' : 's'} already avoid a prep stall (${current} now)`
      : `CPUs: ${cpus} CPUs (${current} now) remove the prep stall${f.workers !== undefined ? ` with num_workers=${f.workers} per rank` : ''}: ${buys(f)}`,
  workers: (
    workers: number,
    current: number,
    cpusNeeded: number,
    cpusNow: number,
    paste: string,
    f: RecommendationFacts,
  ): string =>
    workers === current
      ? `loader workers: ${current} per rank already avoid a prep stall`
      : `loader workers: ${workers} per rank (${current} now) remove${workers === 1 ? 's' : ''} the prep stall: ${buys(f)}; ` +
        `${cpusNeeded <= cpusNow ? `fits the ${cpusNow} CPUs here (needs ${cpusNeeded})` : `needs ${cpusNeeded} CPUs (${cpusNow} here)`}. Paste: ${paste}`,
  workersBest: (workers: number, current: number, cpusNow: number, paste: string, f: RecommendationFacts): string =>
    `loader workers: no count removes the prep stall on ${cpusNow} CPUs; ${workers} per rank (${current} now) is ` +
    `the most they can use: ${buys(f)}; ` +
    `more CPUs are needed for the rest (see CPUs). Paste: ${paste}`,
  cpusImpossible: (limit: number): string =>
    `CPUs: even ${limit} CPUs do not remove the prep stall under the fitted scaling curve`,
  storageNone: (): string =>
    'storage: the cache serves every read in the steady state; storage bandwidth does not matter after epoch 1',
  storage: (needed: number, current: number, f: RecommendationFacts): string =>
    needed <= current
      ? `storage: ${formatRate(needed)} is enough at this cache (${formatRate(current)} now)`
      : `storage: ${formatRate(needed)} (${formatRate(current)} now) removes the fetch stall at this cache: ${buys(f)}`,
  storageLatency: (): string =>
    'storage: no bandwidth removes the fetch stall at this cache: the requests wait for their first bytes (see ' +
    'requests in flight)',
  inFlightNone: (current: number): string =>
    `requests in flight: ${current} per loader worker already avoid a fetch stall`,
  inFlightBandwidth: (current: number): string =>
    `requests in flight: more than ${current} per loader worker do not remove the fetch stall: the network's ` +
    `bandwidth holds it (see storage)`,
  inFlightBest: (enough: number, current: number, f: RecommendationFacts): string =>
    `requests in flight: no count removes the fetch stall; ${enough} per loader worker (${current} now) buy most ` +
    `of what more can (twice as many, under 5% more): ${buys(f)}; ` +
    `the rest is the network's bandwidth or the workers' own prep in series with their reads; fetch each batch ` +
    `with a pool of ${enough} threads in the dataset, or raise the client's own download threads`,
  objectsNone: (current: number): string =>
    `object size: objects of ${formatBytes(current)} already avoid a fetch stall`,
  objectsBandwidth: (current: number): string =>
    `object size: objects larger than ${formatBytes(current)} do not remove the fetch stall: the network's ` +
    `bandwidth holds it (see storage)`,
  objectsBest: (enough: number, current: number, f: RecommendationFacts): string =>
    `object size: no size removes the fetch stall; shards of ${formatBytes(enough)} (objects ` +
    `of ${formatBytes(current)} now) buy most of what larger ones can (twice as large, under 5% more): ${buys(f)}; ` +
    `pack the samples into tar shards of that size (WebDataset's ShardWriter maxsize, Streaming's size_limit)`,
  objects: (needed: number, current: number, f: RecommendationFacts): string =>
    `object size: shards of ${formatBytes(needed)} (objects of ${formatBytes(current)} now) remove the fetch ` +
    `stall: ${buys(f)}; ` +
    `pack the samples into tar shards of that size (WebDataset's ShardWriter maxsize, Streaming's size_limit)`,
  inFlight: (needed: number, current: number, f: RecommendationFacts): string =>
    `requests in flight: ${needed} per loader worker (${current} now) remove the fetch stall: ${buys(f)}; ` +
    `fetch each batch with a pool of ${needed} threads in the dataset, or raise the client's own download threads`,
} as const;

/** What to do about the costliest stage of prep, by its kind: a short action, then the details. */
const PREP_STAGE_ACTIONS: Record<string, { short: string; detail: string }> = {
  read: {
    short: 'faster storage, or cache the files',
    detail:
      'keep the dataset in memory or on local SSD, or pack small files into shards (one read per shard, not per ' +
      'sample)',
  },
  decode: {
    short: 'decode at lower resolution, or on the GPU',
    detail:
      "PIL's Image.draft('RGB', size) decodes a JPEG at 1/2 to 1/8 scale; " +
      "torchvision.io.decode_jpeg(device='cuda') or DALI decode on the GPU (nvJPEG); or store the images pre-resized",
  },
  transform: {
    short: 'move it to the GPU, or use a cheaper op',
    detail:
      'run it on the batch after the copy to the device (torchvision.transforms.v2 takes batched tensors), or ' +
      'crop before resizing, or resize once offline',
  },
  collate: {
    short: 'simpler batches, pinned memory',
    detail:
      'return tensors of one shape and dtype (no Python lists or dicts of scalars), and DataLoader(..., ' +
      'pin_memory=True) for the copy',
  },
};

const MAX_STAGE_NAME = 28;

const FALLBACK_ACTION = {
  short: 'make it cheaper, or move it to the GPU',
  detail: 'it is the largest share of the per-sample work in the loader',
};

/** The costliest stage of prep, in two lines (the first within 120 characters). */
export const PREP_STAGE_TEXT = {
  advice: (name: string, kind: string, share: number, cpuMsPerSample: number): [string, string] => {
    const action = PREP_STAGE_ACTIONS[kind] ?? FALLBACK_ACTION;
    // A transform's class name is the user's: cut so the line keeps within 120 characters.
    const shown = name.length > MAX_STAGE_NAME ? `${name.slice(0, MAX_STAGE_NAME - 3)}...` : name;
    return [
      `prep: ${shown} is ${Math.round(share * 100)}% of prep ` +
        `(${cpuMsPerSample.toFixed(2)} CPU-ms/sample): ${action.short}`,
      action.detail,
    ];
  },
} as const;
