/**
 * The contract of `ds-analyzer gate --history DIR --json` (docs/json-output.md). src/gate/history.ts builds the
 * verdict; gate-history-action.ts prints it with the header.
 */
import { z } from 'zod';
import { outputHeader } from './numbers.js';
import { HISTORY_OUTPUT_VERSION } from './versions.js';

/** One change point: the series changes from index `index` on. */
const ChangePointSchema = z.object({
  /** The first index of the new level. */
  index: z.number().int().nonnegative(),
  /** The permutation test's p-value for this split. */
  pValue: z.number().min(0).max(1),
  /** Median of the segment before (from the previous change, or the start). */
  before: z.number(),
  /** Median of the segment after (to the next change, or the end). */
  after: z.number(),
  /** (after - before) / before; null when before is 0. */
  relative: z.number().nullable(),
});
export type ChangePoint = z.infer<typeof ChangePointSchema>;

export const HistoryOutputSchema = z.object({
  ...outputHeader(HISTORY_OUTPUT_VERSION, 'gate-history'),
  history: z.string(),
  /** The profiles, in time order. */
  points: z.array(
    z.object({
      /** The profile's file name (profiles record no commit: the file names it). */
      file: z.string(),
      createdAt: z.string(),
      /** Cold mode: iteration time per sample, ms. */
      msPerSample: z.number(),
      /** Cold-mode fetch and prep stalls per sample, ms; null when the profile has no analysis. */
      fetchMsPerSample: z.number().nullable(),
      prepMsPerSample: z.number().nullable(),
    }),
  ),
  /** Each series and the steps found in it. */
  series: z.array(
    z.object({
      name: z.enum(['iteration time', 'fetch stall', 'prep stall']),
      values: z.array(z.number()),
      changes: z.array(ChangePointSchema),
    }),
  ),
  maxRegression: z.number().nonnegative(),
  pValue: z.number(),
  /** The step that fails the gate, or null. */
  failing: ChangePointSchema.nullable(),
  exitCode: z.number().int(),
});

/** The history's verdict: the output without its header. */
export type HistoryVerdict = Omit<z.infer<typeof HistoryOutputSchema>, 'schemaVersion' | 'kind' | 'history'>;
