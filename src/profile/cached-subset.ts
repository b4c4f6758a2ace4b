// Warming for the cached mode: the whole dataset when it fits and warms in time, else a seeded random subset that does
// (docs/method.md, "Datasets larger than memory"): prep cost per sample does not depend on which files are read, so a
// resident random subset measures the prep stall the whole would.
import type { Dataset, DatasetFile } from '../system/dataset/dataset.js';
import type { WarmResult } from '../system/page-cache/page-cache.js';
import {
  pickFiles,
  prefixEnd,
  seededOrder,
  sizesOf,
  sortedIndices,
  subsetDataset,
} from '../system/dataset/resident-subset.js';
import type { Subset } from '../schema/profile.js';
import { formatBytes, percent as pct } from '../units.js';
import type { ProcessEvents } from './events-reader.js';

// Memory set aside for the job, whose budget is read before it starts: a PyTorch process alone holds ~135 MB.
const JOB_RESERVE_BYTES = 256 * 2 ** 20;
// Share of the rest the subset takes; the other half is slack for a larger job and for the kernel's reclaim, which
// under a cgroup limit takes file pages first (a 158 MiB subset in a 384 MiB group was half evicted, seen).
const SUBSET_SHARE_OF_BUDGET = 0.5;

/** Bytes of the subset for a memory budget. */
export function subsetTargetBytes(budgetBytes: number): number {
  return SUBSET_SHARE_OF_BUDGET * Math.max(0, budgetBytes - JOB_RESERVE_BYTES);
}
/** Warming is cut into this many parts by bytes: the first part measures the warm rate. */
const WARM_PARTS = 16;
/** Warming may take this long (longer than most cached modes run) before the mode runs on what is warm. */
const DEFAULT_WARM_LIMIT_SEC = 120;

/** What the cached mode will run on. */
export interface CachedPlan {
  /** The dataset the mode measures: the whole one, or the subset. */
  dataset: Dataset;
  /** The subset's record for the profile (jobSamples filled in after the run); absent on the whole dataset. */
  subset?: Omit<Subset, 'jobSamples' | 'jobNote'>;
}

export interface WarmCachedOptions {
  /** Brings files into the page cache (page-cache.ts warm; a fake in tests). */
  warm: (files: readonly DatasetFile[]) => Promise<WarmResult | unknown>;
  /** Seconds warming may take before the mode runs on what is warm. */
  warmLimitSec?: number;
  /** Seed of the permutation. */
  seed?: number;
  /** Clock, ms (tests). */
  now?: () => number;
}

/**
 * Warms what the cached mode needs and says what it is: a dataset that fits whole, unless its first sixteenth projects
 * the whole past `warmLimitSec`; else the largest prefix of a seeded permutation that fills subsetTargetBytes. Warming
 * stops at `warmLimitSec`; with no budget known, the whole (its proof says why).
 */
export async function warmForCachedMode(dataset: Dataset, options: WarmCachedOptions): Promise<CachedPlan> {
  const now = options.now ?? (() => performance.now());
  const limitMs = (options.warmLimitSec ?? DEFAULT_WARM_LIMIT_SEC) * 1000;
  const seed = options.seed ?? 1;
  const budget = dataset.memoryBudgetBytes;
  if (!dataset.fitsInMemory && budget === null) {
    await options.warm(dataset.files);
    return { dataset };
  }
  const started = now();
  const n = dataset.files.length;
  const sizes = sizesOf(dataset.files);
  const order = seededOrder(n, seed);
  const targetBytes = dataset.fitsInMemory ? dataset.bytes : subsetTargetBytes(budget!);
  const end = prefixEnd(order, sizes, 0, 0, targetBytes);
  const partBytes = Math.max(1, targetBytes / WARM_PARTS);
  let done = 0;
  let doneBytes = 0;
  let timedOut = false;
  while (done < end) {
    const next = Math.max(
      done + 1,
      prefixEnd(order, sizes, done, doneBytes, Math.min(targetBytes, doneBytes + partBytes)),
    );
    for (let k = done; k < next; k++) doneBytes += sizes[order[k]];
    await options.warm(pickFiles(dataset.files, sortedIndices(order, done, next)));
    const first = done === 0;
    done = next;
    const elapsed = now() - started;
    if (
      first &&
      dataset.fitsInMemory &&
      doneBytes > 0 &&
      done < end &&
      (elapsed * targetBytes) / doneBytes <= limitMs
    ) {
      // Fast enough: the rest in the table's order, which is cheaper than scattered parts.
      await options.warm(dataset.files);
      return { dataset };
    }
    if (elapsed > limitMs && done < end) {
      timedOut = true;
      break;
    }
  }
  if (done >= n || done === 0) return { dataset };
  const files = pickFiles(dataset.files, sortedIndices(order, 0, done));
  const subset = subsetDataset(dataset, files);
  const warmSec = (now() - started) / 1000;
  const how =
    dataset.fitsInMemory || timedOut
      ? `a seeded random ${pct(done / n)} of the files (the first of a permutation, seed ${seed}) warmed ` +
        `in ${warmSec.toFixed(0)} s; ` +
        `warming ${dataset.fitsInMemory ? `all ${formatBytes(dataset.bytes)}` : `the ${formatBytes(targetBytes)} that fit the memory budget of ${formatBytes(budget!)}`} would have taken longer than ${(limitMs / 1000).toFixed(0)} s`
      : `a seeded random ${pct(done / n)} of the files (the first of a permutation, ` +
        `seed ${seed}), ${formatBytes(subset.bytes)}: ` +
        `half of the memory budget of ${formatBytes(budget!)}${dataset.memoryBudgetSource ? ` (${dataset.memoryBudgetSource})` : ''} less ${formatBytes(JOB_RESERVE_BYTES)} for the job; the rest left to the job`;
  return {
    dataset: subset,
    subset: {
      // Cut short by time even when the budget set the target: the subset is what warming reached.
      reason: timedOut ? 'warm-time' : 'does-not-fit',
      how,
      files: subset.files.length,
      bytes: subset.bytes,
      datasetFiles: n,
      datasetBytes: dataset.bytes,
      seed,
      budgetBytes: dataset.fitsInMemory ? null : budget,
      warmSec,
    },
  };
}

/** Bytes a block reads at most: its budget at each rank's bytes per iteration so far; null before any iteration. */
export function expectedBlockBytes(
  processes: readonly Pick<ProcessEvents, 'iterations'>[],
  maxIterations: number,
  dataset: Pick<Dataset, 'sampleBytes' | 'meanFileBytes'>,
): number | null {
  let perIteration = 0;
  for (const p of processes) {
    if (p.iterations.length === 0) continue;
    const samples = p.iterations.reduce((sum, it) => sum + it.samples, 0);
    const reported = p.iterations.every((it) => it.bytes !== undefined);
    const bytes = reported
      ? p.iterations.reduce((sum, it) => sum + (it.bytes ?? 0), 0)
      : samples * (dataset.sampleBytes ?? dataset.meanFileBytes);
    perIteration += bytes / p.iterations.length;
  }
  return perIteration > 0 ? Math.ceil(perIteration * maxIterations) : null;
}
