/**
 * Each GPU's use during a mode, from the resource samples nvidia-smi fed: the mean utilisation over the samples that
 * report it, and the peak memory. A profile written before samples held each GPU has the mean over GPUs and the summed
 * memory alone: that is one row, named as such.
 */
import type { ResourceSample } from '../schema/profile.js';

export interface GpuUsage {
  /** nvidia-smi's index of the GPU; null: all GPUs together (a profile without per-GPU samples). */
  index: number | null;
  /** Mean utilisation, 0..100, over `samples`; null when none reported it. */
  meanUtilPct: number | null;
  /** Highest memory used seen, bytes; null when none reported it. */
  peakMemBytes: number | null;
  /** Samples with a reading of this GPU. */
  samples: number;
}

interface Tally {
  utilSum: number;
  utilCount: number;
  peakMem: number | null;
  samples: number;
}

function add(tally: Tally, utilPct: number | null | undefined, memBytes: number | null | undefined): void {
  tally.samples += 1;
  if (utilPct != null) {
    tally.utilSum += utilPct;
    tally.utilCount += 1;
  }
  if (memBytes != null) tally.peakMem = Math.max(tally.peakMem ?? 0, memBytes);
}

/** Usage per GPU over `samples`, by index; empty when no sample had a GPU reading. */
export function gpuUsage(samples: ResourceSample[]): GpuUsage[] {
  const byIndex = new Map<number | null, Tally>();
  const tallyOf = (index: number | null): Tally => {
    let tally = byIndex.get(index);
    if (!tally) {
      tally = { utilSum: 0, utilCount: 0, peakMem: null, samples: 0 };
      byIndex.set(index, tally);
    }
    return tally;
  };
  const perDevice = samples.some((s) => s.gpus !== undefined);
  for (const sample of samples) {
    if (perDevice) for (const gpu of sample.gpus ?? []) add(tallyOf(gpu.index), gpu.utilPct, gpu.memBytes);
    else if (sample.gpuUtilPct !== undefined || sample.gpuMemBytes !== undefined)
      add(tallyOf(null), sample.gpuUtilPct, sample.gpuMemBytes);
  }
  return [...byIndex.entries()]
    .sort(([a], [b]) => (a ?? -1) - (b ?? -1))
    .map(([index, t]) => ({
      index,
      meanUtilPct: t.utilCount ? t.utilSum / t.utilCount : null,
      peakMemBytes: t.peakMem,
      samples: t.samples,
    }));
}
