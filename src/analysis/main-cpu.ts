import type { Iteration } from '../schema/profile.js';

/**
 * CPU time of the training process itself per sample over the measured window, ms: the growth of its processCpuMs from
 * the window's first iteration to its last, over the samples of the iterations in between (an iteration's processCpuMs
 * is read when it ends, so the first one's own samples are outside the difference). Null when fewer than two measured
 * iterations carry it.
 */
export function mainCpuMsPerSample(iterations: readonly Iteration[], warmupIterations: number): number | null {
  const measured = iterations.slice(warmupIterations).filter((it) => it.processCpuMs !== undefined);
  if (measured.length < 2) return null;
  const samples = measured.slice(1).reduce((sum, it) => sum + it.samples, 0);
  const cpuMs = measured[measured.length - 1].processCpuMs! - measured[0].processCpuMs!;
  return samples > 0 && cpuMs >= 0 ? cpuMs / samples : null;
}
