/** Sweeps of one setting with the rest of a scenario fixed: cache size (0 to the dataset) and CPUs. */
import { steadyHitRatio, predict, type FittedModel, type Scenario } from './model.js';
import { cpusNeeded } from './recommend.js';
import type { z } from 'zod';
import type { CacheSweepRowSchema, CpuSweepRowSchema, WorkersSweepRowSchema } from '../schema/whatif-output.js';

/** One row of the cache sweep. */
export type CacheSweepRow = z.infer<typeof CacheSweepRowSchema>;

/** One row of the CPU sweep. */
export type CpuSweepRow = z.infer<typeof CpuSweepRowSchema>;

/** Cache sizes 0, D/steps, ..., D under both policies (the scenario's epochs basis applies). */
export function cacheSweep(model: FittedModel, scenario: Scenario, steps: number): CacheSweepRow[] {
  const rows: CacheSweepRow[] = [];
  for (let k = 0; k <= steps; k++) {
    const cacheBytes = Math.round((model.datasetBytes * k) / steps);
    const pageCache = predict(model, { ...scenario, cacheBytes, cachePolicy: 'page-cache' });
    const minio = predict(model, { ...scenario, cacheBytes, cachePolicy: 'minio' });
    rows.push({
      cacheBytes,
      cacheFraction: k / steps,
      pageCacheHitRatio: steadyHitRatio(model, 'page-cache', cacheBytes),
      lruHitRatio: model.lru.steady(cacheBytes),
      minioHitRatio: steadyHitRatio(model, 'minio', cacheBytes),
      pageCacheSamplesPerSec: pageCache.samplesPerSec,
      minioSamplesPerSec: minio.samplesPerSec,
      pageCacheBottleneck: pageCache.bottleneck,
      minioBottleneck: minio.bottleneck,
    });
  }
  return rows;
}

/** CPU counts 1, 2, 4, ... past twice the scenario's (and `alsoInclude`), at most 256. */
export function cpuSweepCounts(current: number, alsoInclude: number[] = []): number[] {
  const counts = new Set<number>([current, ...alsoInclude.filter((c) => c >= 1 && c <= 256)]);
  for (let c = 1; c <= Math.min(256, Math.max(2 * current, 8)); c *= 2) counts.add(c);
  return [...counts].sort((a, b) => a - b);
}

/** Predictions at each CPU count of `counts`. */
export function cpuSweep(model: FittedModel, scenario: Scenario, counts: number[]): CpuSweepRow[] {
  return counts.map((cpus) => {
    const p = predict(model, { ...scenario, cpus });
    return {
      cpus,
      prepStallMs: p.prepStallMs,
      iterMs: p.iterMs,
      samplesPerSec: p.samplesPerSec,
      acceleratorUtilization: p.acceleratorUtilization,
      bottleneck: p.bottleneck,
    };
  });
}

/** One row of the loader-workers sweep. */
export type WorkersSweepRow = z.infer<typeof WorkersSweepRowSchema>;

/** Worker counts 0, 1, 2, 4, ... past twice the profiled count and the CPUs (and `alsoInclude`), at most 128. */
export function workersSweepCounts(profiled: number, cpus: number, alsoInclude: number[] = []): number[] {
  const counts = new Set<number>([0, profiled, ...alsoInclude.filter((w) => w >= 0 && w <= 128)]);
  for (let w = 1; w <= Math.min(128, Math.max(2 * profiled, cpus, 8)); w *= 2) counts.add(w);
  return [...counts].sort((a, b) => a - b);
}

/** Predictions at each loader-worker count of `counts` (the scenario's CPUs held). */
export function workersSweep(model: FittedModel, scenario: Scenario, counts: number[]): WorkersSweepRow[] {
  return counts.map((workers) => {
    const p = predict(model, { ...scenario, workers });
    return {
      workers,
      prepStallMs: p.prepStallMs,
      iterMs: p.iterMs,
      samplesPerSec: p.samplesPerSec,
      bottleneck: p.bottleneck,
      cpusNeeded: cpusNeeded(model, scenario, workers),
    };
  });
}
