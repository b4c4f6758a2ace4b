/**
 * The contract of `ds-analyzer compare --json` (docs/json-output.md). compareOutput() types what src/compare/diff.ts
 * builds against this schema.
 */
import { z } from 'zod';
import { outputHeader } from './numbers.js';
import { EstimateSchema } from './profile.js';

/** Version of compare's JSON; bump when a field is removed or changes meaning (adding one does not). */
export const COMPARE_OUTPUT_VERSION = 1;

/** The change from profile A to B of one figure, with its noise. */
export const ChangeSchema = z.object({
  /** b - a, in the figure's unit. */
  delta: z.number(),
  /** 95% half-width of `delta` (root sum of squares of both sides'); null when either side has no interval. */
  deltaHalfWidth: z.number().nonnegative().nullable(),
  /** delta / a, a fraction (0.05 = 5%); null when a is 0. */
  relative: z.number().nullable(),
  /** 95% half-width of `relative`; null when unknown. */
  relativeHalfWidth: z.number().nonnegative().nullable(),
  /** 'beyond': the interval of delta excludes 0; 'within': it does not; 'unknown': no intervals. */
  noise: z.enum(['beyond', 'within', 'unknown']),
  /** False when either figure rests on a mode whose cache state was not proven. */
  proven: z.boolean(),
});

/** One figure of both profiles. */
export const FigureDiffSchema = z.object({
  /** Section: 'split' (the differential split) or a mode name (synthetic, cached, cold). */
  group: z.string(),
  /** What the figure is: 'fetch stall'. */
  name: z.string(),
  /** Unit of `a`, `b` and `change.delta`; 'share' is a fraction of the iteration time (0.2 = 20%). */
  unit: z.enum(['ms', 'samples/s', 'share', 'MB/s', 'ms/sample']),
  /** Whether a lower value is better (times, stalls) or a higher one (rates). */
  better: z.enum(['lower', 'higher']),
  /** The figure in profile A, with its 95% half-width; null when A lacks it. */
  a: EstimateSchema.nullable(),
  /** The figure in profile B; null when B lacks it. */
  b: EstimateSchema.nullable(),
  /** The change A → B; null when either side lacks the figure. */
  change: ChangeSchema.nullable(),
  /** 'worse' / 'better' when beyond noise, 'same' within it, 'unknown' without intervals or values. */
  verdict: z.enum(['worse', 'better', 'same', 'unknown']),
});

/** Which profile a side is. */
const SideSchema = z.object({
  /** The profile's job name. */
  jobName: z.string(),
  /** When the profile was started, ISO 8601. */
  createdAt: z.string(),
});

export const CompareOutputSchema = z.object({
  ...outputHeader(COMPARE_OUTPUT_VERSION, 'compare'),
  /** Profile A (before). */
  a: SideSchema,
  /** Profile B (after). */
  b: SideSchema,
  /** How B's job, data, settings or machine differ from A's, in words; empty for two runs of one job. */
  differences: z.array(z.string()),
  /** Every compared figure. */
  figures: z.array(FigureDiffSchema),
  /** Figures whose change is beyond noise and for the worse. */
  worse: z.number().int().nonnegative(),
  /** Figures whose change is beyond noise and for the better. */
  better: z.number().int().nonnegative(),
});
export type CompareOutput = z.infer<typeof CompareOutputSchema>;

/** What the compare core returns: the output without its header. */
export type CompareOutputBody = Omit<CompareOutput, 'schemaVersion' | 'kind'>;

/** The printed object: the header first, then the comparison, typed by the schema. */
export function compareOutput(body: CompareOutputBody): CompareOutput {
  return { schemaVersion: COMPARE_OUTPUT_VERSION, kind: 'compare', ...body };
}
