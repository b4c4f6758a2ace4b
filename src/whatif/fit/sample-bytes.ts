/**
 * What one sample costs to fetch: its bytes (s) and the storage bytes read per consumed byte when nothing is cached (a,
 * readahead and whole-file reads against what the job used).
 */
import { bytesPerSample as consumedBytesPerSample } from '../../analysis/mode-rates.js';
import type { Profile } from '../../schema/profile.js';
import { parameter, type Fitted } from './fitted.js';
import { proven, type MeasuredMode, type MeasuredModes } from './modes.js';

/** Bytes per sample, consumed and read. */
export interface SampleBytesFit {
  /** Mean bytes per consumed sample, s. */
  bytesPerSample: number;
  /** Storage bytes read per consumed byte on a miss, a. */
  readAmplification: number;
}

/**
 * Samples the loader may have read and not yet handed over when a measured window closes: each worker's queue (workers
 * x prefetch factor batches), per rank, per run the mode pools. Those reads count in the window and their samples in
 * the next one; a window that ends while they are in flight reads more than it consumes. Null where the loader's
 * settings are unknown.
 */
function samplesInFlight(cold: MeasuredMode): number | null {
  let perRun = 0;
  for (const rank of cold.ranks) {
    const workers = rank.loader?.workers;
    if (workers === undefined) return null;
    // Without workers the training process loads one batch at a time; DataLoader's prefetch_factor defaults to 2.
    perRun += Math.max(1, workers) * Math.max(1, rank.loader?.prefetchFactor ?? 2) * cold.summary.samplesPerIter;
  }
  return cold.ranks.length === 0 ? null : (cold.passes?.length ?? 1) * perRun;
}

/**
 * a from the cold mode: its read fraction, or 1 where the excess over 1 is no more than the samples in flight at the
 * windows' ends could read (a remote job's 1.04-1.06 here, which set its predictions 3-6% slow: docs/results.md).
 */
function readAmplificationOf(cold: MeasuredMode | null): { value: number; source: string; note?: string } {
  const fraction = cold?.state.readFraction ?? null;
  if (cold === null || fraction === null || !(fraction > 0))
    return { value: 1, source: 'assumed 1 (cold readFraction unknown)' };
  const source = 'cold state.readFraction (readBytes / consumedBytes)';
  const consumed = cold.state.consumedSamples;
  const inFlight = samplesInFlight(cold);
  if (fraction > 1 && consumed !== undefined && inFlight !== null && (fraction - 1) * consumed <= inFlight) {
    return {
      value: 1,
      source,
      note:
        `read ${fraction.toFixed(3)}: the excess is within the ${inFlight} samples the loader could hold ` +
        `read at the windows' ends, taken as 1`,
    };
  }
  return { value: fraction, source };
}

/** s as the job reported it (or samples x the mean file size), and a from the cold mode (1 when unknown). */
export function fitSampleBytes(profile: Profile, modes: MeasuredModes): Fitted<SampleBytesFit> {
  const { cached, cold } = modes;
  const fromCold = cold === null ? null : consumedBytesPerSample(cold);
  const bytesPerSample = fromCold ?? consumedBytesPerSample(cached) ?? profile.dataset.meanFileBytes;
  const readFraction = cold?.state.readFraction ?? null;
  const a = readAmplificationOf(cold);
  const readAmplification = a.value;
  return {
    kind: 'fitted',
    value: { bytesPerSample, readAmplification },
    parameters: [
      cold === null
        ? parameter(
            's',
            'bytes per sample',
            bytesPerSample,
            'bytes',
            'cached state.consumedBytes / samples consumed (no cold mode)',
            proven(cached),
          )
        : parameter(
            's',
            'bytes per sample',
            bytesPerSample,
            'bytes',
            'cold state.consumedBytes / samples consumed',
            proven(cold),
          ),
      parameter(
        'a',
        'storage bytes read per consumed byte when cold',
        readAmplification,
        'ratio',
        a.source,
        cold !== null && proven(cold) && readFraction !== null,
        a.note,
      ),
    ],
    caveats: [],
  };
}
