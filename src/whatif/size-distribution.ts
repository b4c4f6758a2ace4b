/**
 * The file-size distribution of a dataset expanded from its stored histogram (analysis/size-histogram.ts) into item
 * sizes for the cache simulation.
 */
import type { SizeHistogram } from '../analysis/size-histogram.js';

/**
 * `items` sizes drawn from the histogram by stratification, not at random: each bucket gets its share of the items
 * (largest remainder), every item at the bucket's mean size. The shuffle of the simulation supplies the randomness;
 * stratifying removes sampling noise from the size mix.
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
