/** Settings of an emulated job that determine its iteration time. */
export interface EmulatorSettings {
  /** Emulated accelerator time per batch, ms. */
  computeMs: number;
  /** Pre-processing wall time per sample in one worker, ms. */
  prepMs: number;
  batchSize: number;
  workers: number;
  /** CPUs the workers can run on at once. */
  cpus: number;
  /** Mean bytes per sample file. */
  meanFileBytes: number;
  /** Storage read bandwidth, bytes/s, or null when not throttled (cold reads then run at disk speed). */
  storageBwBytesPerSec: number | null;
}

/** Per-iteration times the settings imply, ms. */
export interface ImpliedSplit {
  computeMs: number;
  prepStallMs: number;
  /** Null when storage is not throttled: the disk's own speed is not a setting. */
  fetchStallMs: number | null;
}

/**
 * What the emulator's settings imply for the differential split. Each worker overlaps reading its next batch with
 * preparing the current one, so the three stages form a pipeline whose pace is set by its slowest stage: compute C,
 * prep b*p/min(W, cpus), and storage b*s/BW shared by all workers.
 */
export function impliedSplit(s: EmulatorSettings): ImpliedSplit {
  const prepPerBatchMs = (s.batchSize * s.prepMs) / Math.max(1, Math.min(s.workers, s.cpus));
  const cachedMs = Math.max(s.computeMs, prepPerBatchMs);
  const fetchPerBatchMs = s.storageBwBytesPerSec
    ? ((s.batchSize * s.meanFileBytes) / s.storageBwBytesPerSec) * 1000
    : null;
  return {
    computeMs: s.computeMs,
    prepStallMs: cachedMs - s.computeMs,
    fetchStallMs: fetchPerBatchMs === null ? null : Math.max(cachedMs, fetchPerBatchMs) - cachedMs,
  };
}
