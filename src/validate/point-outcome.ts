// What one validate point's run measured, built the same way for every kind: the run's summary, ranks and failure tail
// come from its ModeResult, and a kind names only what it measures beyond them (a cache point its residency, a CPU
// point its affinity, a cold point its first batch).
import { failureTail } from '../profile/run-setup.js';
import type { IterationSummary, ModeResult } from '../schema/profile.js';
import type { AffinityVerdict, ResidencyVerdict } from './held.js';
import type { CheckpointCheck } from './results.js';

/** Lines of a failed point's log in the report. */
const FAILURE_TAIL_LINES = 10;

/** What a point's run measured, for run-validate.ts to set beside the model's prediction. */
export interface PointOutcome {
  /** The measured iterations' summary; null when the run failed. */
  summary: IterationSummary | null;
  /** Ranks of the job (1 at least). */
  ranks: number;
  /** The point's note in the report: what was held and how the run ended. */
  note: string;
  /** Cache points: the dataset's mean resident bytes; null elsewhere or unmeasured. */
  residentBytes: number | null;
  /** Cache points: whether the cap held its target; null elsewhere. */
  residency: ResidencyVerdict | null;
  /** Points with an affinity mask: whether it reached every thread; null elsewhere. */
  affinity: AffinityVerdict | null;
  /** Whether a workers point's job ran the asked count, or a cold point's state was proven; null for others. */
  settingHeld: boolean | null;
  /** Bytes fetched per consumed sample (the hit ratio's evidence); null where not measured. */
  readBytesPerSample: number | null;
  /** The end of a failed run's log; null when it did not fail. */
  failureTail: string | null;
  /** Cold points (bandwidth, latency): seconds from the job's start to its first batch; null elsewhere. */
  firstBatchSec: number | null;
  /** Write points: the run's saves against the prediction; absent elsewhere. */
  checkpoint?: CheckpointCheck;
}

/** What a kind measured beyond what every run gives (the rest null). */
export type PointMeasurements = Partial<Omit<PointOutcome, 'ranks' | 'note' | 'failureTail'>>;

/** A point's outcome from its run, its note and what its kind measured; unmeasured fields null. */
export function pointOutcome(result: ModeResult, note: string, measured: PointMeasurements = {}): PointOutcome {
  return {
    summary: result.status === 'ok' ? result.summary : null,
    ranks: Math.max(1, result.ranks.length),
    note,
    residentBytes: null,
    residency: null,
    affinity: null,
    settingHeld: null,
    readBytesPerSample: null,
    failureTail: failureTail(result, FAILURE_TAIL_LINES),
    firstBatchSec: null,
    ...measured,
  };
}
