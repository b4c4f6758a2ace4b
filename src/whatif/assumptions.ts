/**
 * What a prediction rests on that no measurement pinned, and the range it
 * spans. A resource that never set a mode's pace shows only a lower bound of
 * its capacity; the model then takes the capacity its physics allows (a
 * worker one CPU, a CPU one CPU-second a second) and keeps the other end here,
 * so an answer that depends on it prints as a range with the assumption
 * named, and the advice is made on the pessimistic end (DESIGN: capacities,
 * not paces).
 */
import type { FittedModel, Prediction, Scenario } from './model.js';

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

/** The fitted values an assumption may move: the model without its list of assumptions. */
type Values = Omit<FittedModel, 'assumptions'>;

/** The assumptions of a fitted model: each one where its two ends differ. */
export function assumptionsOf(model: Values): Assumption[] {
  const out: Assumption[] = [];
  const share = model.cpuShareLow;
  const pct = (x: number): string => `${Math.round(x * 100)}%`;
  if (model.profiledWorkers !== null && model.profiledWorkers > 0 && !model.workerShareMeasured && share < 1) {
    out.push({
      id: 'worker-share',
      text: `a loader worker gets a whole CPU when it needs one (no measured count was prep-bound; other load took ${pct(1 - share)} of the CPUs while profiling)`,
      pessimistic: share,
      optimistic: 1,
    });
  }
  if (model.cpuScaling.kind === 'linear' && model.cpuShareAssumed && share < 1) {
    out.push({
      id: 'cpu-share',
      text: `a CPU gives the job a whole CPU-second a second (prep never set the pace; other load took ${pct(1 - share)} of the CPUs while profiling)`,
      pessimistic: share,
      optimistic: 1,
    });
  }
  if (!model.overlapMeasured && model.serialUpperBound > model.fetchPrepSerial) {
    out.push({
      id: 'overlap',
      text: `reads and pre-processing overlap (σ = ${model.fetchPrepSerial.toFixed(2)}; not measured, the cold mode allows up to ${model.serialUpperBound.toFixed(2)}: profile --overlap measures it)`,
      pessimistic: model.serialUpperBound,
      optimistic: model.fetchPrepSerial,
    });
  }
  if (model.readAmplification < 1) {
    out.push({
      id: 'read-amplification',
      text: `a miss reads ${pct(model.readAmplification)} of its bytes from storage, as the cold mode did (the rest of its reads hit pages not yet evicted; every byte from storage is the slow end)`,
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

/** The model and scenario with an assumption at `value`. Storage moves only where the scenario kept the profiled bandwidth. */
export function withAssumption(model: FittedModel, scenario: Scenario, assumption: Assumption, value: number): { model: FittedModel; scenario: Scenario } {
  switch (assumption.id) {
    case 'worker-share':
      return { model: { ...model, assumedWorkerShare: value }, scenario };
    case 'cpu-share':
      return { model: { ...model, cpuScaling: { kind: 'linear', perCpu: value } }, scenario };
    case 'overlap':
      return { model: { ...model, fetchPrepSerial: value }, scenario };
    case 'read-amplification':
      return { model: { ...model, readAmplification: value }, scenario };
    case 'storage':
      return scenario.storageBytesPerSec === model.storageBytesPerSec ? { model, scenario: { ...scenario, storageBytesPerSec: value } } : { model, scenario };
  }
}

/** Every assumption at one end. */
export function atEnd(model: FittedModel, scenario: Scenario, end: 'pessimistic' | 'optimistic'): { model: FittedModel; scenario: Scenario } {
  let at = { model, scenario };
  for (const a of model.assumptions) at = withAssumption(at.model, at.scenario, a, a[end]);
  return at;
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

/** A change smaller than this share of the answer does not name its assumption. */
const VISIBLE_SHARE = 0.01;

/**
 * The range of `point` (the prediction at the model's own values) over the
 * model's assumptions: every assumption at its pessimistic end, then at its
 * optimistic end; each assumption that alone moves the answer is named.
 */
export function predictionRange(model: FittedModel, scenario: Scenario, point: Prediction, predict: (m: FittedModel, s: Scenario) => Prediction): PredictionRange {
  const ends = (['pessimistic', 'optimistic'] as const).map((end) => {
    const at = atEnd(model, scenario, end);
    return predict(at.model, at.scenario).iterMs;
  });
  const named = model.assumptions.filter((a) =>
    [a.pessimistic, a.optimistic].some((v) => {
      const at = withAssumption(model, scenario, a, v);
      return Math.abs(predict(at.model, at.scenario).iterMs - point.iterMs) > VISIBLE_SHARE * point.iterMs;
    }),
  );
  const low = Math.min(point.iterMs, ...ends);
  const high = Math.max(point.iterMs, ...ends);
  const rate = point.samplesPerSec * point.iterMs;
  return { iterMs: { low, high }, samplesPerSec: { low: rate / high, high: rate / low }, assumptions: named.map((a) => a.text) };
}
