/**
 * The answers to "what is the smallest change that removes the stall?": the cache under each policy, the CPUs, and the
 * storage bandwidth, each with what it buys. All in the steady state (epoch 2 on): the first epoch of a job is cold
 * whatever the cache.
 */
import { RECOMMENDATION_TEXT, type RecommendationFacts } from './advice-text.js';
import { bisect } from './bisect.js';
import type { PageCacheModel } from './page-cache-curve.js';
import {
  dataSec,
  NEGLIGIBLE_FETCH_STALL,
  predict,
  profiledObjectBytes,
  requestWaitSec,
  scenarioWorkers,
  stageTimes,
  type CachePolicy,
  type FittedModel,
  type Prediction,
  type Scenario,
} from './model.js';
import type { z } from 'zod';
import type { RecommendationSchema } from '../schema/whatif-output.js';

/**
 * Whether a prediction's fetch stall shows: beyond NEGLIGIBLE_FETCH_STALL of the pace without it, whether or not it is
 * the largest stall (the bottleneck names the largest).
 */
export function fetchStalls(p: Pick<Prediction, 'fetchStallMs' | 'iterMs'>): boolean {
  return p.fetchStallMs > (p.iterMs - p.fetchStallMs) * NEGLIGIBLE_FETCH_STALL;
}

/** One recommendation. */
export type Recommendation = z.infer<typeof RecommendationSchema>;

/** Most CPUs the search goes to before calling the prep stall irremovable. */
export const MAX_CPUS = 4096;

/** All recommendations for a scenario (steady state). */
export function recommend(model: FittedModel, scenario: Scenario): Recommendation[] {
  const steady: Scenario = { ...scenario, epochs: null };
  const now = predict(model, steady);
  const workers = workersFor(model, steady, now);
  const workersFirst =
    workers !== null &&
    !fetchStalls(now) &&
    now.bottleneck === 'prep' &&
    workers.value !== null &&
    workers.value !== scenarioWorkers(model, steady);
  return [
    // When the loader's workers hold prep back, raising them is the first thing to try: it costs nothing.
    ...(workersFirst ? [workers!] : []),
    cacheFor(model, steady, now, 'page-cache'),
    cacheFor(model, steady, now, 'minio'),
    cpusFor(model, steady, now),
    storageFor(model, steady, now),
    ...(workers && !workersFirst ? [workers] : []),
    ...[inFlightFor(model, steady, now), objectSizeFor(model, steady, now)].filter(
      (r): r is Recommendation => r !== null,
    ),
  ];
}

/** Most loader workers per rank the search tries. */
export const MAX_WORKERS = 256;

/**
 * The smallest num_workers per rank that removes the prep stall on the scenario's CPUs, with the CPUs it needs and the
 * line to paste; or, when no count does, the count beyond which more workers buy nothing here. Null when the job did
 * not report its workers (not modelled).
 */
export function workersFor(model: FittedModel, scenario: Scenario, now: Prediction): Recommendation | null {
  const current = scenarioWorkers(model, scenario);
  if (current === null) return null;
  const base = { kind: 'workers' as const, unit: 'workers' as const };
  const at = (workers: number): Prediction => predict(model, { ...scenario, workers });
  const removes = (p: Prediction): boolean =>
    (fetchStalls(p) || p.bottleneck !== 'prep') && p.prepStallMs <= now.computeMs * NEGLIGIBLE_FETCH_STALL;
  const paste = (w: number): string => pasteLine(model.loaderFramework, w);
  if (removes(now))
    return {
      ...base,
      value: current,
      prediction: now,
      text: RECOMMENDATION_TEXT.workers(
        current,
        current,
        cpusNeeded(model, scenario, current),
        scenario.cpus,
        paste(current),
        facts(now, now),
      ),
    };
  // The smallest count that removes it; failing that, the smallest that reaches the best pace here.
  let best = Math.max(1, current);
  let bestPrediction = at(best);
  for (let w = 1; w <= MAX_WORKERS; w++) {
    const after = w === best ? bestPrediction : at(w);
    if (removes(after))
      return {
        ...base,
        value: w,
        prediction: after,
        text: RECOMMENDATION_TEXT.workers(
          w,
          current,
          cpusNeeded(model, scenario, w),
          scenario.cpus,
          paste(w),
          facts(now, after),
        ),
      };
    if (after.samplesPerSec > bestPrediction.samplesPerSec * (1 + 1e-6)) {
      best = w;
      bestPrediction = after;
    }
  }
  return {
    ...base,
    value: null,
    prediction: bestPrediction,
    text: RECOMMENDATION_TEXT.workersBest(best, current, scenario.cpus, paste(best), facts(now, bestPrediction)),
  };
}

/** CPUs that `workers` loader workers per rank and the training processes need: a CPU a worker at most. */
export function cpusNeeded(model: FittedModel, scenario: Scenario, workers: number): number {
  return Math.ceil(scenario.gpus * (workers + model.mainCpusPerRank) - 1e-9);
}

/** The line a user pastes to set the workers, in the framework that built the loader. */
export function pasteLine(framework: string | null, workers: number): string {
  if (framework === 'hf-trainer')
    return `TrainingArguments(..., dataloader_num_workers=${workers}) (or --dataloader_num_workers ${workers})`;
  return `DataLoader(..., num_workers=${workers})${framework === 'lightning' ? " in the LightningDataModule's *_dataloader()" : ''}`;
}

const POLICY_WORD: Record<CachePolicy, string> = { 'page-cache': 'page cache', minio: 'MinIO cache (no eviction)' };
const PAGE_CACHE_MODEL_WORD: Record<PageCacheModel, string> = {
  'linux-two-list': "Linux's active and inactive lists",
  'exact-lru': 'LRU',
};
// Remote objects are cached whole in a local folder: Streaming's cache_limit and LitData's max_cache_size evict least
// recently used shards.
const REMOTE_POLICY_WORD: Record<CachePolicy, string> = {
  'page-cache': "local cache of whole objects, LRU (Streaming's cache_limit, LitData's max_cache_size)",
  minio: 'local cache of whole objects that never evicts (WebDataset cache_dir)',
};

function policyWord(model: FittedModel, policy: CachePolicy): string {
  if (model.remoteObjects) return REMOTE_POLICY_WORD[policy];
  return policy === 'page-cache'
    ? `${POLICY_WORD[policy]} (${PAGE_CACHE_MODEL_WORD[model.pageCachePolicy.model]})`
    : POLICY_WORD[policy];
}

function facts(now: Prediction, after: Prediction): RecommendationFacts {
  return {
    fromSamplesPerSec: now.samplesPerSec,
    toSamplesPerSec: after.samplesPerSec,
    bottleneckAfter: after.bottleneck,
  };
}

/**
 * Most of storage's time the fetch stage may take per sample of pace and still count as no stall. At 100% (the paper's
 * knee, fetch = pace) storage has no slack, and any variation in read times or hit ratio shows as a stall; like any
 * queue, it is kept below full.
 */
export const MAX_STORAGE_UTILISATION = 0.9;

/**
 * Longest fetch time per sample that leaves no stall: storage at most 90% busy, and prep and fetch together (partly in
 * series, overlap.ts) within the negligible stall of the data-free pace max(compute, prep).
 */
export function maxFetchWithoutStall(
  model: FittedModel,
  t: { gpu: number; prep: number; prepInSeries: number },
): number {
  const pace = Math.max(t.gpu, t.prep);
  const allowed = pace * (1 + NEGLIGIBLE_FETCH_STALL);
  let fetch = MAX_STORAGE_UTILISATION * pace;
  // The data time grows with fetch: shorten it until prep and fetch fit in the allowed time.
  if (dataSec(model, t, fetch) > allowed) {
    fetch = bisect(0, fetch, (f) => dataSec(model, t, f) > allowed).low;
  }
  return fetch;
}

/**
 * Slack above the smallest page cache that removes the stall. Under LRU the hits near that size come all at once, and a
 * page cache's size drifts: on the emulated job 1 MiB (0.4%) less than the recommended 232.5 MiB predicted a 6% slower
 * job, and validate, whose cache held a mean 231.5 MiB, measured it.
 */
export const PAGE_CACHE_SLACK = 0.05;

/**
 * Smallest cache whose steady hit ratio h brings the fetch time down to maxFetchWithoutStall: h* = 1 - maxFetch /
 * t_fetch(0). MinIO: M = h* D; LRU: invert the simulated curve.
 */
export function cacheFor(model: FittedModel, scenario: Scenario, now: Prediction, policy: CachePolicy): Recommendation {
  const answer = cacheAssumingOverlap(model, scenario, now, policy);
  if (model.overlapMeasured || model.serialUpperBound <= model.fetchPrepSerial) return answer;
  if (answer.value === null || answer.value === 0 || stageTimes(model, scenario, 0).prep === 0) return answer;
  // σ unknown: the same question at the largest σ the cold mode allows bounds the answer from above.
  const serial = cacheAssumingOverlap(
    { ...model, fetchPrepSerial: model.serialUpperBound },
    scenario,
    now,
    policy,
  ).value;
  if (serial === answer.value) return answer;
  return {
    ...answer,
    ifSerialBytes: serial,
    text:
      answer.text +
      RECOMMENDATION_TEXT.ifSerial(serial, model.datasetBytes, model.serialUpperBound, policy === 'page-cache'),
  };
}

function cacheAssumingOverlap(
  model: FittedModel,
  scenario: Scenario,
  now: Prediction,
  policy: CachePolicy,
): Recommendation {
  const t = stageTimes(model, scenario, 0);
  const target = t.fetch > 0 ? 1 - maxFetchWithoutStall(model, t) / t.fetch : 0;
  const base = { kind: 'cache' as const, cachePolicy: policy, unit: 'bytes' as const };
  if (target <= 0)
    return { ...base, value: 0, prediction: now, text: RECOMMENDATION_TEXT.cacheNone(policyWord(model, policy)) };
  if (policy === 'minio') {
    const bytes = Math.ceil(target * model.datasetBytes);
    const after = predict(model, { ...scenario, cachePolicy: policy, cacheBytes: bytes });
    return {
      ...base,
      value: bytes,
      prediction: after,
      text: RECOMMENDATION_TEXT.cache(policyWord(model, policy), bytes, model.datasetBytes, facts(now, after)),
    };
  }
  const smallest = model.pageCache.smallestFor(target);
  if (smallest === null)
    return {
      ...base,
      value: null,
      prediction: null,
      text: RECOMMENDATION_TEXT.cacheImpossible(policyWord(model, policy)),
    };
  const edge = Math.ceil(smallest);
  const byMean = Math.min(model.pageCache.wholeBytes, Math.ceil(edge * (1 + PAGE_CACHE_SLACK)));
  // The epoch's mean hit ratio is not enough: LRU's misses come at the end of each epoch.
  const byParts = smallestCacheWithoutLateStall(model, scenario);
  const bytes = Math.max(byMean, byParts ?? byMean);
  const after = predict(model, { ...scenario, cachePolicy: policy, cacheBytes: bytes });
  const late =
    bytes > byMean ? { meanBytes: byMean, hitByPart: model.pageCache.steadyByPart(byMean) ?? [] } : undefined;
  const text =
    RECOMMENDATION_TEXT.cache(
      policyWord(model, policy),
      bytes,
      model.datasetBytes,
      facts(now, after),
      late ? undefined : edge,
      late,
    ) + (model.remoteObjects ? RECOMMENDATION_TEXT.cacheLimitPaste(bytes) : '');
  return { ...base, value: bytes, edgeBytes: edge, prediction: after, text };
}

/**
 * Under LRU with a fresh order each epoch, the hits of an epoch come early (the end of the previous epoch is still
 * cached) and its misses late: at a cache whose mean hit ratio just removes the stall, the last eighth of each epoch
 * waits on storage. A prep-bound loader never runs ahead, so nothing smooths that out: on the PyTorch example the pace
 * taken per eighth predicted 553.6 samples/s where 546.0 were measured and the epoch mean 605.3. The smallest cache at
 * which the pace taken per eighth of the epoch stays within the negligible stall; null when even the whole dataset does
 * not (or the curve has no parts).
 */
export function smallestCacheWithoutLateStall(model: FittedModel, scenario: Scenario): number | null {
  const idle = stageTimes(model, scenario, 0);
  const allowed = Math.max(idle.gpu, idle.prep) * (1 + NEGLIGIBLE_FETCH_STALL);
  const hitsByPart = (bytes: number) => model.pageCache.steadyByPart(bytes);
  const withinStall = (bytes: number): boolean => {
    const parts = hitsByPart(bytes)!;
    const secPerSample = parts.map((h) => {
      const t = stageTimes(model, scenario, h);
      return Math.max(t.gpu, dataSec(model, t, t.fetch));
    });
    return secPerSample.reduce((a, b) => a + b, 0) / parts.length <= allowed;
  };
  const whole = model.pageCache.wholeBytes;
  if (hitsByPart(whole) === null || !withinStall(whole)) return null;
  return Math.ceil(bisect(0, whole, withinStall, 50, 1).high);
}

/** Smallest CPU count with t_prep(c) <= t_gpu (searched, so a fitted eff(c) works too). */
export function cpusFor(model: FittedModel, scenario: Scenario, now: Prediction): Recommendation {
  const base = { kind: 'cpus' as const, unit: 'cpus' as const };
  const gpuSec = stageTimes(model, scenario, 0).gpu;
  // With the workers raised to use the CPUs (more CPUs than workers would sit idle), in the model predict uses.
  const workers = scenarioWorkers(model, scenario);
  const at = (c: number): Scenario => ({
    ...scenario,
    cpus: c,
    ...(workers === null ? {} : { workers: Math.max(workers, Math.ceil(c / scenario.gpus)) }),
  });
  let cpus: number | null = null;
  for (let c = 1; c <= MAX_CPUS; c++) {
    if (stageTimes(model, at(c), 0).prep <= gpuSec * (1 + 1e-9)) {
      cpus = c;
      break;
    }
  }
  if (cpus === null)
    return { ...base, value: null, prediction: null, text: RECOMMENDATION_TEXT.cpusImpossible(MAX_CPUS) };
  const asked = at(Math.max(cpus, scenario.cpus));
  const after = predict(model, asked);
  const enough = asked.workers ?? null;
  const raised = enough !== null && workers !== null && enough > workers ? { workers: enough } : {};
  return {
    ...base,
    value: cpus,
    prediction: after,
    text: RECOMMENDATION_TEXT.cpus(cpus, scenario.cpus, { ...facts(now, after), ...raised }),
  };
}

/** Storage bandwidth that brings the fetch time at the scenario's cache down to maxFetchWithoutStall. */
export function storageFor(model: FittedModel, scenario: Scenario, now: Prediction): Recommendation {
  const base = { kind: 'storage' as const, unit: 'bytes/s' as const };
  const h = now.steadyHitRatio;
  if (h >= 1) return { ...base, value: 0, prediction: now, text: RECOMMENDATION_TEXT.storageNone() };
  const t = stageTimes(model, scenario, h);
  // Remote requests wait for their first byte whatever the bandwidth: only the time left over is the bandwidth's.
  const room = maxFetchWithoutStall(model, t) - (1 - h) * requestWaitSec(model, scenario);
  if (!(room > 0)) return { ...base, value: null, prediction: null, text: RECOMMENDATION_TEXT.storageLatency() };
  const needed = (scenario.gpus * (1 - h) * model.readAmplification * model.bytesPerSample) / room;
  const after = predict(model, { ...scenario, storageBytesPerSec: Math.max(needed, scenario.storageBytesPerSec) });
  return {
    ...base,
    value: needed,
    prediction: after,
    text: RECOMMENDATION_TEXT.storage(needed, scenario.storageBytesPerSec, facts(now, after)),
  };
}

/** Most requests in flight per worker the search tries. */
export const MAX_IN_FLIGHT = 256;
/** Doubling the requests in flight must buy this factor of throughput to be worth it. */
const KNEE_GAIN = 1.05;

/**
 * Remote data: the fewest requests in flight per loader worker (threads per worker) that remove the fetch stall; null
 * when the job's requests were not seen (local files, HTTPS), or value null when bandwidth, not latency, holds the
 * fetch back.
 */
export function inFlightFor(model: FittedModel, scenario: Scenario, now: Prediction): Recommendation | null {
  if ((scenario.requestLatencySec ?? model.requestLatencySec) === 0) return null;
  const base = { kind: 'requests' as const, unit: 'requests' as const };
  const current = scenario.inFlightPerWorker ?? model.profiledInFlightPerWorker ?? 1;
  if (!fetchStalls(now)) return { ...base, value: 0, prediction: now, text: RECOMMENDATION_TEXT.inFlightNone(current) };
  const at = (q: number): Prediction => predict(model, { ...scenario, epochs: null, inFlightPerWorker: q });
  const most = at(MAX_IN_FLIGHT);
  if (fetchStalls(most)) {
    // No count removes it: past the knee, where doubling the requests in flight buys under 5%.
    let enough = current;
    let rate = at(enough).samplesPerSec;
    while (2 * enough <= MAX_IN_FLIGHT) {
      const doubled = at(2 * enough).samplesPerSec;
      if (doubled < KNEE_GAIN * rate) break;
      enough *= 2;
      rate = doubled;
    }
    if (enough <= current)
      return { ...base, value: null, prediction: null, text: RECOMMENDATION_TEXT.inFlightBandwidth(current) };
    const after = at(enough);
    return {
      ...base,
      value: enough,
      prediction: after,
      text: RECOMMENDATION_TEXT.inFlightBest(enough, current, facts(now, after)),
    };
  }
  const needed = Math.ceil(bisect(current, MAX_IN_FLIGHT, (q) => !fetchStalls(at(Math.ceil(q))), 60, 0.5).high);
  const after = at(needed);
  return {
    ...base,
    value: needed,
    prediction: after,
    text: RECOMMENDATION_TEXT.inFlight(needed, current, facts(now, after)),
  };
}

/** Largest object the search tries: 4 GiB, past any shard size in use. */
const MAX_OBJECT_BYTES = 4 * 2 ** 30;

/**
 * Remote data: the smallest object (a shard of many samples, fetched by one request) that removes the fetch stall,
 * searched by doubling from the objects as profiled; null when the job's requests were not seen. Larger objects need
 * fewer requests per sample (r = sample bytes / object bytes), each waiting L for its first byte; the bytes are the
 * same.
 */
export function objectSizeFor(model: FittedModel, scenario: Scenario, now: Prediction): Recommendation | null {
  if ((scenario.requestLatencySec ?? model.requestLatencySec) === 0 || model.profiledInFlightPerWorker === null)
    return null;
  const base = { kind: 'objects' as const, unit: 'bytes' as const };
  const current = scenario.objectBytes ?? profiledObjectBytes(model);
  if (!fetchStalls(now)) return { ...base, value: 0, prediction: now, text: RECOMMENDATION_TEXT.objectsNone(current) };
  const at = (bytes: number): Prediction => predict(model, { ...scenario, epochs: null, objectBytes: bytes });
  let size = current;
  let rate = now.samplesPerSec;
  while (2 * size <= MAX_OBJECT_BYTES) {
    const doubled = at(2 * size);
    if (!fetchStalls(doubled)) {
      return {
        ...base,
        value: 2 * size,
        prediction: doubled,
        text: RECOMMENDATION_TEXT.objects(2 * size, current, facts(now, doubled)),
      };
    }
    // Past the knee, where doubling the object buys under 5%: the bandwidth holds the rest.
    if (doubled.samplesPerSec < KNEE_GAIN * rate) break;
    size *= 2;
    rate = doubled.samplesPerSec;
  }
  if (size <= current)
    return { ...base, value: null, prediction: null, text: RECOMMENDATION_TEXT.objectsBandwidth(current) };
  const after = at(size);
  return {
    ...base,
    value: size,
    prediction: after,
    text: RECOMMENDATION_TEXT.objectsBest(size, current, facts(now, after)),
  };
}
