/**
 * The file-size histogram of a dataset, as the profile stores it (dataset.fileBytesHistogram): log-spaced buckets, four
 * per octave. The profile step builds it from the dataset's files; the what-if expands it back into item sizes
 * (whatif/size-distribution.ts).
 */
import type { Profile } from '../schema/profile.js';

/** Buckets per doubling of size: bucket edges are 2^(k/4) bytes, so a bucket spans a factor of 1.19. */
export const BUCKETS_PER_OCTAVE = 4;

/** A compact file-size histogram, as stored in `dataset.fileBytesHistogram`. */
export type SizeHistogram = NonNullable<Profile['dataset']['fileBytesHistogram']>;

/** Builds the log-spaced histogram of `sizesBytes` (files of 0 bytes go to a [0, 1) bucket). */
export function sizeHistogram(sizesBytes: Iterable<number>): SizeHistogram {
  const byIndex = new Map<number, { files: number; bytes: number }>();
  for (const size of sizesBytes) {
    const index = size < 1 ? -1 : Math.floor(Math.log2(size) * BUCKETS_PER_OCTAVE + 1e-9);
    const bucket = byIndex.get(index) ?? { files: 0, bytes: 0 };
    bucket.files++;
    bucket.bytes += size;
    byIndex.set(index, bucket);
  }
  const buckets = [...byIndex.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([index, { files, bytes }]) => ({
      lowBytes: index < 0 ? 0 : Math.ceil(2 ** (index / BUCKETS_PER_OCTAVE)),
      highBytes: index < 0 ? 1 : Math.ceil(2 ** ((index + 1) / BUCKETS_PER_OCTAVE)),
      files,
      bytes,
    }));
  return { bucketsPerOctave: BUCKETS_PER_OCTAVE, buckets };
}
