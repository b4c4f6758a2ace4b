/**
 * The contract of `ds-analyzer gate --history DIR --json` (docs/json-output.md).
 * src/gate/history.ts builds the verdict; gate-history-action.ts prints it
 * with the header.
 */
import { z } from 'zod';
import { HISTORY_OUTPUT_VERSION } from './versions.js';

const ChangePointSchema = z.object({
  index: z.number().int().nonnegative(),
  pValue: z.number().min(0).max(1),
  before: z.number(),
  after: z.number(),
  relative: z.number().nullable(),
});

export const HistoryOutputSchema = z.object({
  schemaVersion: z.literal(HISTORY_OUTPUT_VERSION),
  kind: z.literal('gate-history'),
  history: z.string(),
  points: z.array(
    z.object({
      file: z.string(),
      createdAt: z.string(),
      msPerSample: z.number(),
      fetchMsPerSample: z.number().nullable(),
      prepMsPerSample: z.number().nullable(),
    }),
  ),
  series: z.array(
    z.object({
      name: z.enum(['iteration time', 'fetch stall', 'prep stall']),
      values: z.array(z.number()),
      changes: z.array(ChangePointSchema),
    }),
  ),
  maxRegression: z.number().nonnegative(),
  pValue: z.number(),
  failing: ChangePointSchema.nullable(),
  exitCode: z.number().int(),
});
