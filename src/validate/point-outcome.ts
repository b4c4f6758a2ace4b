// What one validate point's run measured, built the same way for every kind: the run's summary, ranks and failure tail
// come from its ModeResult, and a kind names only what it measures beyond them (a cache point its residency, a CPU
// point its affinity, a cold point its first batch).
import { failureTail } from '../profile/run-setup.js';
import type { IterationSummary, ModeResult } from '../schema/profile.js';
import type { ValidationResult } from './results.js';

/** Lines of a failed point's log in the report. */
const FAILURE_TAIL_LINES = 10;

/** What a point's run measured, for run-validate.ts to set beside the model's prediction (fields as in its result). */
export type PointOutcome = Pick<
  ValidationResult,
  'note' | 'residentBytes' | 'residency' | 'affinity' | 'failureTail' | 'checkpoint'
> & {
  /** The measured iterations' summary; null when the run failed. */
  summary: IterationSummary | null;
  /** Ranks of the job (1 at least). */
  ranks: number;
  /** Whether a workers point's job ran the asked count, or a cold point's state was proven; null for others. */
  settingHeld: boolean | null;
  /** Bytes fetched per consumed sample (the hit ratio's evidence); null where not measured. */
  readBytesPerSample: number | null;
  /** Cold points (bandwidth, latency): seconds from the job's start to its first batch; null elsewhere. */
  firstBatchSec: number | null;
};

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
