// The overlap probe (profile --overlap): the cold mode once more with a share of the dataset held cached, so that fetch
// and prep take about as long as each other. Whether the job then runs at the larger of the two or nearer their sum is
// σ of the what-if model (src/whatif/overlap.ts), which a cold mode that kept storage busy cannot show.
import { FETCH_WORDS } from './proof-text.js';
import type { FetchOrigin } from './data-sources/data-source.js';
import type { DatasetFile } from '../system/dataset/dataset.js';
import { pickFiles, prefixEnd, seededOrder, sizesOf, sortedIndices } from '../system/dataset/resident-subset.js';
import type { ModeResult, StateProof } from '../schema/profile.js';
import { percent as pct } from '../units.js';
import { bytesPerSample } from '../analysis/mode-rates.js';

/** Shares of the dataset the probe holds resident at the least and the most. */
const MIN_SHARE = 0.1;
const MAX_SHARE = 0.9;

/** How far the resident share before the run and the read share during it may be from the plan. */
const SHARE_TOLERANCE = 0.05;
const READ_TOLERANCE = 0.1;

/** The resident share h with (1 - h) * fetch = prep (s per sample); null when fetch does not exceed prep. */
export function probeShare(fetchSecPerSample: number, prepSecPerSample: number): number | null {
  if (!(fetchSecPerSample > prepSecPerSample) || !(prepSecPerSample > 0)) return null;
  return Math.min(MAX_SHARE, Math.max(MIN_SHARE, 1 - prepSecPerSample / fetchSecPerSample));
}

/** Seconds per sample of fetch and prep, from a profile's cached and cold modes; null when either is missing. */
export function stageSecPerSample(
  cached: ModeResult | undefined,
  cold: ModeResult | undefined,
): { fetch: number; prep: number } | null {
  if (
    cached?.status !== 'ok' ||
    cold?.status !== 'ok' ||
    !cached.summary ||
    !cold.summary ||
    !cold.storageReadBytesPerSec
  )
    return null;
  const consumed = bytesPerSample(cold);
  if (consumed === null) return null;
  return {
    fetch: (consumed * (cold.state.readFraction ?? 1)) / cold.storageReadBytesPerSec,
    prep: cached.summary.iterMs.mean / 1000 / cached.summary.samplesPerIter,
  };
}

/**
 * A seeded random subset holding about `share` of the bytes: a seeded permutation's prefix ending before or after the
 * file that crosses the share, whichever is nearer, and never empty (a few large shards would leave nothing).
 */
export function residentSubset(files: readonly DatasetFile[], share: number, seed = 1): DatasetFile[] {
  if (files.length === 0) return [];
  const sizes = sizesOf(files);
  let total = 0;
  for (let k = 0; k < files.length; k++) total += sizes[k];
  const order = seededOrder(files.length, seed);
  const target = share * total;
  let end = prefixEnd(order, sizes, 0, 0, target);
  let held = 0;
  for (let k = 0; k < end; k++) held += sizes[order[k]];
  if (end < files.length && (end === 0 || held + sizes[order[end]] - target < target - held)) end++;
  return pickFiles(files, sortedIndices(order, 0, end));
}

/** The probe's proof: the planned share resident before the run, and reads of about the rest during it. */
export function proveProbe(state: StateProof, share: number, origin: FetchOrigin = 'storage'): StateProof {
  const { fetched, unmeasured } = FETCH_WORDS[origin];
  const resident = state.datasetBytes > 0 ? state.residentBytesBefore / state.datasetBytes : 0;
  const verdict = (proven: boolean, reason: string): StateProof => ({ ...state, proven, reason });
  if (Math.abs(resident - share) > SHARE_TOLERANCE) {
    return verdict(false, `${pct(resident)} of the dataset was resident before the run, not the ${pct(share)} planned`);
  }
  if (state.readFraction === null) return verdict(false, `${unmeasured} (${state.readBytesSource})`);
  if (Math.abs(state.readFraction - (1 - share)) > READ_TOLERANCE) {
    return verdict(
      false,
      `${pct(state.readFraction)} of consumed bytes ${fetched}, not about ${pct(1 - share)}: the held part did ` +
        `not stay resident, or the rest did not stay cold`,
    );
  }
  return verdict(
    true,
    `${pct(resident)} resident before the run (planned ${pct(share)}); ${pct(state.readFraction)} of consumed ` +
      `bytes ${fetched}`,
  );
}
