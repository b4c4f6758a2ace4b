/**
 * What a fitted model rests on that no measurement pinned: each assumed value with its slow and fast end
 * (../assumptions.ts turns them into the range of a prediction). A resource that never set a mode's pace shows only a
 * lower bound of its capacity; the model then takes the capacity its physics allows (a worker one CPU, a CPU one
 * CPU-second a second) and keeps the other end here (DESIGN: capacities, not paces).
 */
import type { CpuShareFit } from './cpu-share.js';
import type { LoaderWorkersFit } from './loader-workers.js';
import type { PrepCpuFit } from './prep-cpu.js';
import type { SampleBytesFit } from './sample-bytes.js';
import type { StorageFit } from './storage.js';

/** A value the model assumed, with the ends it could take. */
export interface Assumption {
  /** Which value. */
  id: 'worker-share' | 'cpu-share' | 'overlap' | 'storage' | 'read-amplification';
  /** What is assumed, in words, for the line beside a range. */
  text: string;
  /** The value at the slow end. */
  pessimistic: number;
  /** The value at the fast end. */
  optimistic: number;
}

/** The fitted values an assumption may move (model.ts, FittedModel). */
type Values = Pick<LoaderWorkersFit, 'profiledWorkers' | 'workerShareMeasured'> &
  Pick<CpuShareFit, 'cpuShareLow'> &
  Pick<PrepCpuFit, 'cpuScaling' | 'cpuShareAssumed'> &
  Pick<
    StorageFit,
    'overlapMeasured' | 'serialUpperBound' | 'fetchPrepSerial' | 'storageIsLowerBound' | 'storageBytesPerSec'
  > &
  Pick<SampleBytesFit, 'readAmplification'>;

/** The assumptions of a fitted model: each one where its two ends differ. */
export function assumptionsOf(model: Values): Assumption[] {
  const out: Assumption[] = [];
  const share = model.cpuShareLow;
  const pct = (x: number): string => `${Math.round(x * 100)}%`;
  if (model.profiledWorkers !== null && model.profiledWorkers > 0 && !model.workerShareMeasured && share < 1) {
    out.push({
      id: 'worker-share',
      text:
        `a loader worker gets a whole CPU when it needs one (no measured count was prep-bound; other load ` +
        `took ${pct(1 - share)} of the CPUs while profiling)`,
      pessimistic: share,
      optimistic: 1,
    });
  }
  if (model.cpuScaling.kind === 'linear' && model.cpuShareAssumed && share < 1) {
    out.push({
      id: 'cpu-share',
      text:
        `a CPU gives the job a whole CPU-second a second (prep never set the pace; other load ` +
        `took ${pct(1 - share)} of the CPUs while profiling)`,
      pessimistic: share,
      optimistic: 1,
    });
  }
  if (!model.overlapMeasured && model.serialUpperBound > model.fetchPrepSerial) {
    out.push({
      id: 'overlap',
      text:
        `reads and pre-processing overlap (σ = ${model.fetchPrepSerial.toFixed(2)}; not measured, the cold ` +
        `mode allows up to ${model.serialUpperBound.toFixed(2)}: profile --overlap measures it)`,
      pessimistic: model.serialUpperBound,
      optimistic: model.fetchPrepSerial,
    });
  }
  if (model.readAmplification < 1) {
    out.push({
      id: 'read-amplification',
      text:
        `a miss reads ${pct(model.readAmplification)} of its bytes from storage, as the cold mode did (the ` +
        `rest of its reads hit pages not yet evicted; every byte from storage is the slow end)`,
      pessimistic: 1,
      optimistic: model.readAmplification,
    });
  }
  if (model.storageIsLowerBound) {
    out.push({
      id: 'storage',
      text: 'storage is no faster than the cold mode read it (it never set the pace, and no read probe measured it)',
      pessimistic: model.storageBytesPerSec,
      optimistic: Number.POSITIVE_INFINITY,
    });
  }
  return out;
}

/** The range a prediction spans over its assumptions. */
export interface PredictionRange {
  /** Per-iteration time at the fast and the slow end, ms. */
  iterMs: { low: number; high: number };
  /** Samples per second at the slow and the fast end. */
  samplesPerSec: { low: number; high: number };
  /** The assumptions that move this answer by more than 1%, in words. */
  assumptions: string[];
}
