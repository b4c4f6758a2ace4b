/**
 * How far fetching and pre-processing overlap.
 *
 * The paper's model takes a sample's time as max(compute, prep, fetch): each stage hides the others. A DataLoader
 * worker does not: it reads a sample and then decodes it, so while every worker decodes, storage sits idle. Measured
 * here: the PyTorch example, throttled to 20 MB/s, read at 14.1 MB/s in its cold mode with a fetch stall, because its
 * two workers alternated reading and decoding. The data time per sample is therefore a norm of the two stages,
 * (prep^(1/σ) + fetch^(1/σ))^σ, with σ the share of the two that runs in series: σ = 0 is perfect overlap (the max), σ
 * = 1 none (the sum). σ is fitted where both stages are known: the cold mode's time per sample, with prep from the
 * cached mode and fetch from the storage throttle the profile set.
 */

import { bisect, middle } from './bisect.js';

/** Perfect overlap: the data time is the larger of prep and fetch. */
export const PERFECT_OVERLAP = 0;

/** Below this σ the norm is the max to within 1.1% (2^(1/64)): taken as perfect overlap. */
const MIN_SERIAL = 1 / 64;

/** Data time per sample for prep and fetch times of which a share σ runs in series. */
export function dataTime(prepSec: number, fetchSec: number, serial: number): number {
  const top = Math.max(prepSec, fetchSec);
  if (serial <= PERFECT_OVERLAP || top === 0) return top;
  const k = 1 / serial;
  // Scaled by the larger term so large k neither overflows nor underflows.
  return top * ((prepSec / top) ** k + (fetchSec / top) ** k) ** serial;
}

/** What fitting k needs: per-sample seconds of each stage at a hit ratio of 0, and the measured cold time. */
export interface OverlapInputs {
  /** Compute per sample (the accelerator's stage, overlapped with data by the prefetch queue). */
  computeSec: number;
  prepSec: number;
  /** Fetch per sample at the storage's true bandwidth (the throttle). */
  fetchSec: number;
  /** The cold mode's measured time per sample. */
  coldSec: number;
}

/**
 * σ such that max(compute, dataTime(prep, fetch, σ)) = the cold time; null when no σ in [0, 1] explains it: the cold
 * mode was slower than even no overlap (storage slower than its throttle), so overlap is not what is wrong. Returns
 * PERFECT_OVERLAP when the cold mode is within `tolerance` of the max.
 */
export function fitOverlap(inputs: OverlapInputs, tolerance = 0.02): number | null {
  const { computeSec, prepSec, fetchSec, coldSec } = inputs;
  if (coldSec <= Math.max(computeSec, prepSec, fetchSec) * (1 + tolerance)) return PERFECT_OVERLAP;
  if (coldSec > (prepSec + fetchSec) * (1 + tolerance)) return null;
  if (coldSec >= prepSec + fetchSec) return 1;
  // dataTime grows monotonically with σ.
  return middle(bisect(MIN_SERIAL, 1, (serial) => dataTime(prepSec, fetchSec, serial) >= coldSec));
}

/** What the joint fit needs: per-sample seconds of compute and prep, and two measured times. */
export interface JointOverlapInputs {
  computeSec: number;
  prepSec: number;
  /** The cold mode's time per sample (nothing cached). */
  coldSec: number;
  /** The overlap probe's time per sample, with `share` of the dataset cached. */
  probeSec: number;
  share: number;
}

/**
 * σ and the fetch time per sample at no cache, from the cold mode and the overlap probe together: two equations,
 * max(compute, d(prep, f, σ)) = cold and max(compute, d(prep, (1 - share) f, σ)) = probe. On storage that was not
 * throttled, the rate the cold mode read already holds any time its workers spent not reading, so taking it as the
 * storage's bandwidth and fitting σ to the probe alone would count that time twice. Null when the cold mode was not
 * slower than compute and prep (no fetch to take apart).
 */
export function fitOverlapJoint(inputs: JointOverlapInputs): { serial: number; fetchSec: number } | null {
  const { computeSec, prepSec, coldSec, probeSec, share } = inputs;
  if (!(coldSec > Math.max(computeSec, prepSec) * 1.001) || !(share > 0 && share < 1)) return null;
  /** The fetch time that makes the cold equation hold at σ (d grows with fetch). */
  const fetchAt = (serial: number): number =>
    middle(bisect(0, coldSec, (fetch) => dataTime(prepSec, fetch, serial) >= coldSec));
  const probeAt = (serial: number): number =>
    Math.max(computeSec, dataTime(prepSec, (1 - share) * fetchAt(serial), serial));
  // The probe's predicted time grows with σ: the cold time pins the sum, and the balanced probe feels the series most.
  if (probeAt(PERFECT_OVERLAP) >= probeSec) return { serial: PERFECT_OVERLAP, fetchSec: fetchAt(PERFECT_OVERLAP) };
  if (probeAt(1) <= probeSec) return { serial: 1, fetchSec: fetchAt(1) };
  const serial = middle(bisect(MIN_SERIAL, 1, (s) => probeAt(s) >= probeSec, 50));
  return { serial, fetchSec: fetchAt(serial) };
}

/**
 * The largest σ the measured cold time allows: the most of fetch and prep that can run in series with max(compute,
 * dataTime) still within the cold time. A cold mode that compute or prep kept busy hides its fetch, so it rules out
 * little: where even the sum fits under it, σ = 1 is allowed.
 */
export function largestSerial(inputs: OverlapInputs): number {
  const { computeSec, prepSec, fetchSec, coldSec } = inputs;
  const fits = (serial: number): boolean => Math.max(computeSec, dataTime(prepSec, fetchSec, serial)) <= coldSec;
  if (fits(1)) return 1;
  if (!fits(MIN_SERIAL)) return PERFECT_OVERLAP;
  // dataTime grows monotonically with σ.
  return bisect(MIN_SERIAL, 1, (serial) => !fits(serial)).low;
}
