/**
 * What a prediction rests on that no measurement pinned, and the range it spans. A resource that never set a mode's
 * pace shows only a lower bound of its capacity; the model then takes the capacity its physics allows (a worker one
 * CPU, a CPU one CPU-second a second) and keeps the other end here, so an answer that depends on it prints as a range
 * with the assumption named, and the advice is made on the pessimistic end (DESIGN: capacities, not paces).
 */
import type { FittedModel, Prediction, Scenario } from './model.js';
import type { Assumption, PredictionRange } from './fit/assumptions-of.js';

/**
 * The model and scenario with an assumption at `value`. Storage moves only where the scenario kept the profiled
 * bandwidth.
 */
export function withAssumption(
  model: FittedModel,
  scenario: Scenario,
  assumption: Assumption,
  value: number,
): { model: FittedModel; scenario: Scenario } {
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
      return scenario.storageBytesPerSec === model.storageBytesPerSec
        ? { model, scenario: { ...scenario, storageBytesPerSec: value } }
        : { model, scenario };
  }
}

/** Every assumption at one end. */
export function atEnd(
  model: FittedModel,
  scenario: Scenario,
  end: 'pessimistic' | 'optimistic',
): { model: FittedModel; scenario: Scenario } {
  let at = { model, scenario };
  for (const a of model.assumptions) at = withAssumption(at.model, at.scenario, a, a[end]);
  return at;
}

/** A change smaller than this share of the answer does not name its assumption. */
const VISIBLE_SHARE = 0.01;

/**
 * The range of `point` (the prediction at the model's own values) over the model's assumptions: every assumption at its
 * pessimistic end, then at its optimistic end; each assumption that alone moves the answer is named.
 */
export function predictionRange(
  model: FittedModel,
  scenario: Scenario,
  point: Prediction,
  predict: (m: FittedModel, s: Scenario) => Prediction,
): PredictionRange {
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
  return {
    iterMs: { low, high },
    samplesPerSec: { low: rate / high, high: rate / low },
    assumptions: named.map((a) => a.text),
  };
}
