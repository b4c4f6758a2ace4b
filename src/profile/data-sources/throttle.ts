// Throttling, a source's capability: its read bandwidth held down (--storage-bw, validate's bandwidth points).
import type { Dataset } from '../../system/dataset/dataset.js';

/** A throttle of the data's read bandwidth, set up for a run of jobs. */
export interface Throttle {
  /** The job's argv, wrapped to run under the throttle. */
  wrap(argv: string[]): string[];
  /** Removes the throttle once its jobs have ended. */
  remove(): Promise<void>;
}

/** Throttles the data's reads. */
export interface ReadThrottle {
  /** Why reads cannot be throttled on this machine now (`env` names a delegated cgroup), or null when they can. */
  obstacle(env: NodeJS.ProcessEnv): string | null;
  /** Throttles reads of `dataset` (`name` tells its groups apart); a UserError when it cannot be throttled. */
  start(dataset: Dataset, bytesPerSec: number, name: string, env: NodeJS.ProcessEnv): Promise<Throttle>;
}

/** A source that can throttle its reads. */
export interface Throttling {
  readonly throttle: ReadThrottle;
}

/** Why reads of `source` cannot be throttled on this machine now, or null when they can. */
export function throttleObstacle(source: Partial<Throttling>, env: NodeJS.ProcessEnv): string | null {
  return source.throttle ? source.throttle.obstacle(env) : 'this data source cannot throttle its reads';
}
