// Which points validate runs, from what was asked: cache sizes (bytes, shares of the dataset, or whatif's
// recommendation) and CPU counts, after the control. Pure: the sizes are resolved against the profile and its model.
import { ExitCode, UserError } from '../errors.js';
import type { Profile } from '../schema/profile.js';
import { resolveCacheSize, type CacheSize } from '../units.js';
import { baseScenario, predict, type FittedModel } from '../whatif/model.js';
import { cacheFor } from '../whatif/recommend.js';
import type { ValidationPoint } from './point-kinds.js';
import { checkpointStall } from '../analysis/checkpoint-stall.js';
import { VALIDATE_TEXT } from './validate-text.js';

/** A cache size as asked: bytes, a share of the dataset, or whatif's recommended cache. */
export type CacheRequest = CacheSize | { word: 'recommended' };

/** The points asked for, before anything about this machine is known. */
export interface PointRequest {
  /** Cache sizes to run at, in the order given. */
  cacheSizes: CacheRequest[];
  /** CPU counts to run at, in the order given. */
  cpuCounts: number[];
  /** Loader worker counts per rank to run at (DSA_NUM_WORKERS), in the order given. */
  workerCounts: number[];
  /** Read bandwidths to run the cold mode at, bytes/s, in the order given (absent: none). */
  bandwidths?: number[];
  /** Remote data: times to a first byte to run the cold mode at, s, in the order given (absent: none). */
  latencies?: number[];
  /**
   * Write bandwidths to run the cached mode at (a write throttle on every disk), bytes/s, in the order given (absent:
   * none).
   */
  writeBandwidths?: number[];
  /** Cells of whatif --matrix to run at: a CPU count and a cache size at once (absent: none). */
  cells?: { cpus: number; cache: CacheSize }[];
  /** Whether the control (the profiled settings again) runs first. */
  control: boolean;
}

/**
 * The points, in run order: the control, then the cache points, the matrix cells, the CPU points, the loader-workers
 * points, the bandwidth, latency and write points.
 */
export function requestedPoints(profile: Profile, model: FittedModel, request: PointRequest): ValidationPoint[] {
  const cache: ValidationPoint[] = request.cacheSizes.map((size) =>
    'word' in size
      ? { kind: 'cache', cacheBytes: recommendedCache(model), recommended: true }
      : { kind: 'cache', cacheBytes: resolveCacheSize(size, profile.dataset.bytes) },
  );
  const cpus: ValidationPoint[] = request.cpuCounts.map((count) => ({ kind: 'cpus', cpus: count }));
  const workers: ValidationPoint[] = request.workerCounts.map((count) => ({ kind: 'workers', workers: count }));
  const bandwidths: ValidationPoint[] = (request.bandwidths ?? []).map((bytesPerSec) => ({
    kind: 'bandwidth',
    bytesPerSec,
  }));
  const latencies: ValidationPoint[] = (request.latencies ?? []).map((latencySec) => ({ kind: 'latency', latencySec }));
  const writes: ValidationPoint[] = (request.writeBandwidths ?? []).map((bytesPerSec) => ({
    kind: 'write',
    bytesPerSec,
  }));
  if (writes.length > 0 && (checkpointStall(profile.modes)?.intervalIterations ?? null) === null)
    throw new UserError(VALIDATE_TEXT.noSaves, ExitCode.MissingInput);
  const cells: ValidationPoint[] = (request.cells ?? []).map((cell) => ({
    kind: 'cache',
    cacheBytes: resolveCacheSize(cell.cache, profile.dataset.bytes),
    cpus: cell.cpus,
  }));
  const control: ValidationPoint[] = request.control ? [{ kind: 'control' }] : [];
  return [...control, ...cache, ...cells, ...cpus, ...workers, ...bandwidths, ...latencies, ...writes];
}

/** whatif's answer: the smallest LRU page cache that removes the fetch stall, in the steady state. */
export function recommendedCache(model: FittedModel): number {
  const scenario = { ...baseScenario(model), epochs: null };
  const answer = cacheFor(model, scenario, predict(model, scenario), 'page-cache');
  if (answer.value === null) {
    throw new UserError(VALIDATE_TEXT.noCacheRemoves, ExitCode.BadValue);
  }
  if (answer.value === 0) {
    throw new UserError(VALIDATE_TEXT.noFetchStall, ExitCode.BadValue);
  }
  return answer.value;
}
