/**
 * What the report needs from the what-if model (src/whatif, written separately): throughput curves computed from a
 * profile. The report never models anything itself; without a model it says so.
 */
import type { Profile } from '../schema/profile.js';

/** One point of a what-if curve. */
export interface WhatIfPoint {
  /** The varied resource: cache bytes, or CPUs. */
  x: number;
  /** Predicted training throughput, samples/s. */
  samplesPerSec: number;
}

/** Curves the report draws. */
export interface WhatIfCurves {
  /** Throughput against cache size, one curve per cache policy. */
  cache: { policy: 'page-cache' | 'minio'; label: string; points: WhatIfPoint[] }[];
  /** Throughput against the number of CPUs (x = CPUs). */
  cpus: WhatIfPoint[];
  /** Points to mark on the cache chart (x = cache bytes): the measured cold and cached modes. */
  cacheMarks: { label: string; x: number; samplesPerSec: number }[];
  /** Points to mark on the CPU chart (x = CPUs): this machine. */
  cpuMarks: { label: string; x: number; samplesPerSec: number }[];
  /** Throughput against loader workers per rank (x = workers); empty when the job did not report its workers. */
  workers: WhatIfPoint[];
  /**
   * Points to mark on the workers chart (x = workers): the cached mode at the script's count and the profile --workers
   * sweep.
   */
  workersMarks: { label: string; x: number; samplesPerSec: number }[];
  /** Scenario the CPU curve holds fixed, in words (cache size, storage). */
  cpuScenario: string;
  /** Caveats of the model (e.g. 'prep scaling assumed linear: no CPU sweep'). */
  notes: string[];
}

/**
 * What the report's what-if section draws: the model's curves, or the reason there are none (the whatif command's own
 * answer is WhatifResult).
 */
export type WhatIfCurvesOrReason = { available: true; curves: WhatIfCurves } | { available: false; reason: string };

/** Computes the curves of a profile. */
export type WhatIfSource = (profile: Profile) => WhatIfCurvesOrReason | Promise<WhatIfCurvesOrReason>;
