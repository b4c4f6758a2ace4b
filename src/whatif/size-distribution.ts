/**
 * The file-size distribution of a dataset, stored compactly in the profile
 * (log-spaced buckets, four per octave) and expanded back into item sizes for
 * the cache simulation.
 */

/** Buckets per doubling of size: bucket edges are 2^(k/4) bytes, so a bucket spans a factor of 1.19. */
export const BUCKETS_PER_OCTAVE = 4;

/** One non-empty bucket of the histogram. */
export interface SizeBucket {
  /** Smallest size the bucket admits, bytes (inclusive). */
  lowBytes: number;
  /** Upper edge, bytes (exclusive). */
  highBytes: number;
  /** Files in the bucket. */
  files: number;
  /** Total bytes of those files (so bytes / files is their mean, and totals stay exact). */
  bytes: number;
}

/** A compact file-size histogram, as stored in `dataset.fileBytesHistogram`. */
export interface SizeHistogram {
  /** Buckets per octave of size. */
  bucketsPerOctave: number;
  /** Non-empty buckets, ascending. */
  buckets: SizeBucket[];
}

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

/**
 * `items` sizes drawn from the histogram by stratification, not at random:
 * each bucket gets its share of the items (largest remainder), every item at
 * the bucket's mean size. The shuffle of the simulation supplies the
 * randomness; stratifying removes sampling noise from the size mix.
 */
export function sizesFromHistogram(histogram: SizeHistogram, items: number): Float64Array {
  const totalFiles = histogram.buckets.reduce((sum, b) => sum + b.files, 0);
  const out = new Float64Array(items);
  if (totalFiles === 0 || items === 0) return out;
  const shares = histogram.buckets.map((b) => (b.files / totalFiles) * items);
  const counts = shares.map(Math.floor);
  let left = items - counts.reduce((a, b) => a + b, 0);
  const byRemainder = shares.map((s, i) => [s - Math.floor(s), i] as const).sort((a, b) => b[0] - a[0]);
  for (let k = 0; left > 0; k = (k + 1) % byRemainder.length, left--) counts[byRemainder[k][1]]++;
  let at = 0;
  histogram.buckets.forEach((bucket, i) => {
    out.fill(bucket.files > 0 ? bucket.bytes / bucket.files : 0, at, at + counts[i]);
    at += counts[i];
  });
  return out;
}

/** `items` copies of one size: the fallback when a profile has no histogram. */
export function uniformSizes(meanBytes: number, items: number): Float64Array {
  return new Float64Array(items).fill(meanBytes);
}
