// The caveat a profile carries when its cached mode ran on a resident subset of the dataset
// (src/profile/cached-subset.ts), in words shown to users.
import type { Subset } from '../schema/profile.js';
import { formatBytes } from '../units.js';

const WHY: Record<Subset['reason'], string> = {
  'does-not-fit': 'the dataset does not fit in the memory the job has',
  'warm-time': 'warming the whole dataset would have taken longer than the mode',
};

/**
 * Says that the cached mode ran on a subset, why, and why the prep stall still holds: pre-processing costs the same per
 * sample whichever files are read, and a seeded random sample of files keeps the dataset's mix of sizes (its mean file
 * size is given beside the dataset's, so a skewed draw shows).
 */
export function subsetCaveat(subset: Subset): string {
  const meanSubset = subset.files > 0 ? subset.bytes / subset.files : 0;
  const meanAll = subset.datasetFiles > 0 ? subset.datasetBytes / subset.datasetFiles : 0;
  return (
    `cached mode on a resident subset: ${subset.files} of ${subset.datasetFiles} files ` +
    `(${formatBytes(subset.bytes)} of ${formatBytes(subset.datasetBytes)}), ` +
    `because ${WHY[subset.reason]}; the prep stall still holds, since pre-processing costs the same per sample ` +
    `whichever files are read, ` +
    `and the subset is a seeded random sample of the files (mean file ${formatBytes(meanSubset)}, ` +
    `dataset ${formatBytes(meanAll)})`
  );
}
