/**
 * What one sample costs to fetch: its bytes (s) and the storage bytes read
 * per consumed byte when nothing is cached (a, readahead and whole-file reads
 * against what the job used).
 */
import { bytesPerSample as consumedBytesPerSample } from '../../analysis/mode-rates.js';
import type { Profile } from '../../schema/profile.js';
import { parameter, type Fitted } from './fitted.js';
import { proven, type MeasuredModes } from './modes.js';

/** Bytes per sample, consumed and read. */
export interface SampleBytesFit {
  /** Mean bytes per consumed sample, s. */
  bytesPerSample: number;
  /** Storage bytes read per consumed byte on a miss, a. */
  readAmplification: number;
}

/** s as the job reported it (or samples x the mean file size), and a from the cold mode (1 when unknown). */
export function fitSampleBytes(profile: Profile, modes: MeasuredModes): Fitted<SampleBytesFit> {
  const { cached, cold } = modes;
  const fromCold = cold === null ? null : consumedBytesPerSample(cold);
  const bytesPerSample = fromCold ?? consumedBytesPerSample(cached) ?? profile.dataset.meanFileBytes;
  const readFraction = cold?.state.readFraction ?? null;
  const readAmplification = readFraction !== null && readFraction > 0 ? readFraction : 1;
  return {
    kind: 'fitted',
    value: { bytesPerSample, readAmplification },
    parameters: [
      cold === null
        ? parameter('s', 'bytes per sample', bytesPerSample, 'bytes', 'cached state.consumedBytes / samples consumed (no cold mode)', proven(cached))
        : parameter('s', 'bytes per sample', bytesPerSample, 'bytes', 'cold state.consumedBytes / samples consumed', proven(cold)),
      parameter(
        'a',
        'storage bytes read per consumed byte when cold',
        readAmplification,
        'ratio',
        readFraction !== null ? 'cold state.readFraction (readBytes / consumedBytes)' : 'assumed 1 (cold readFraction unknown)',
        cold !== null && proven(cold) && readFraction !== null,
      ),
    ],
    caveats: [],
  };
}
