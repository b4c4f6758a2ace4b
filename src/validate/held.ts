// Whether a validate point tested what it asked for: a cache point whose dataset residency stayed near the target, a
// CPU point whose affinity reached every thread of the job. A point that did not is "not held": its measurement is kept
// but left out of the model's error, since the asked setting was not tested (issue 13, item 2).
import type { z } from 'zod';
import type { AffinityVerdictSchema, ResidencyVerdictSchema } from '../schema/validate-output.js';

/** Relative half-width of the band a cache point's residency must stay in. */
const RESIDENCY_BAND = 0.1;
/**
 * Least half-width of the band, as a share of the dataset: a cap of 0 (or a few files) still has the files being read
 * in the cache, and the band must not be narrower than that.
 */
const RESIDENCY_BAND_FLOOR = 0.01;
/** Share of the readings that must lie in the band, beside the mean. */
const IN_BAND_QUORUM = 0.5;

/** How a cache point's residency went over its measured window. */
export type ResidencyVerdict = z.infer<typeof ResidencyVerdictSchema>;

/**
 * Judges residency readings against a target: held when the mean lies within ±RESIDENCY_BAND of the target (at least
 * ±RESIDENCY_BAND_FLOOR of the dataset) and at least IN_BAND_QUORUM of the readings do. The mean is what the prediction
 * is made at; the quorum keeps a cache that swung between empty and full, with a mean near the target by chance, from
 * passing.
 */
export function judgeResidency(
  readingsBytes: readonly number[],
  askedBytes: number,
  datasetBytes: number,
): ResidencyVerdict {
  const targetBytes = Math.min(askedBytes, datasetBytes);
  const toleranceBytes = Math.max(RESIDENCY_BAND * targetBytes, RESIDENCY_BAND_FLOOR * datasetBytes);
  const n = readingsBytes.length;
  if (n === 0)
    return {
      targetBytes,
      toleranceBytes,
      meanBytes: null,
      minBytes: null,
      maxBytes: null,
      readings: 0,
      inBandShare: 0,
      held: false,
    };
  const meanBytes = readingsBytes.reduce((a, b) => a + b, 0) / n;
  const inBand = (bytes: number): boolean => Math.abs(bytes - targetBytes) <= toleranceBytes;
  const inBandShare = readingsBytes.filter(inBand).length / n;
  return {
    targetBytes,
    toleranceBytes,
    meanBytes,
    minBytes: Math.min(...readingsBytes),
    maxBytes: Math.max(...readingsBytes),
    readings: n,
    inBandShare,
    held: inBand(meanBytes) && inBandShare >= IN_BAND_QUORUM,
  };
}

/** One thread of the job and the CPUs it may run on. */
export interface ThreadAffinity {
  pid: number;
  tid: number;
  cpus: number[];
}

/** Whether a CPU point's affinity reached the job. */
export type AffinityVerdict = z.infer<typeof AffinityVerdictSchema>;

/** Judges the job's threads' affinity masks against the CPUs asked for. */
export function judgeAffinity(threads: readonly ThreadAffinity[], cpus: readonly number[]): AffinityVerdict {
  const asked = new Set(cpus);
  const outside = threads.filter((t) => t.cpus.some((cpu) => !asked.has(cpu)));
  const first = outside[0];
  return {
    cpus: [...cpus],
    threads: threads.length,
    outside: outside.length,
    example: first ? `thread ${first.tid} of process ${first.pid} may run on CPUs ${first.cpus.join(',')}` : null,
    held: threads.length > 0 && outside.length === 0,
  };
}
