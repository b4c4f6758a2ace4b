/**
 * The contract of `ds-analyzer gate --json` (docs/json-output.md); the JUnit XML's shape is documented there too and
 * checked by test/gate/junit-shape.test.ts. gateOutput() types the verdict that src/gate/rules.ts builds against this
 * schema.
 */
import { z } from 'zod';
import { outputHeader } from './numbers.js';
import { RULE_IDS } from '../gate/rule-ids.js';
import { GATE_OUTPUT_VERSION } from './versions.js';

/** Outcome of one budget rule. */
export const RuleOutcomeSchema = z.object({
  /** Config key of the rule. */
  id: z.enum(RULE_IDS),
  /** Name people read: 'fetch stall'. */
  name: z.string(),
  /** Level the budget was set at ('off' rules are not listed). */
  level: z.enum(['error', 'warn']),
  /** pass; fail (failed at level error); warn (failed at level warn). */
  result: z.enum(['pass', 'fail', 'warn']),
  /** The budget, as text: '≤ 20% of iteration'. */
  expected: z.string(),
  /** The measurement, as text: '61% ± 3%'; '—' when not measurable. */
  actual: z.string(),
  /** Why, when the numbers alone do not say it (unproven mode, noise, missing mode); else null. */
  note: z.string().nullable(),
  /**
   * The limit: a share of the iteration time (0.2 = 20%) for stalls and regression, samples/s for throughput, seconds
   * for the time to the first batch.
   */
  limit: z.number(),
  /** The measured value in the unit of `limit`; null when not measurable. */
  value: z.number().nullable(),
  /** Where the budget came from: a flag (--max-fetch-stall) or the config file. */
  source: z.string(),
  /**
   * Which epochs the figure is of: 'first-epoch' (the dataset cold: the cold mode) or 'later-epochs' (epochs 2+, with
   * --epochs later; the time to the first batch is always the first epoch's). Absent from older gates' output.
   */
  judges: z.enum(['first-epoch', 'later-epochs']).optional(),
});

export const GateOutputSchema = z.object({
  ...outputHeader(GATE_OUTPUT_VERSION, 'gate'),
  /** The profile gated, as given on the command line. */
  profile: z.string(),
  /** Baseline profile of the regression rule (absolute path), or null. */
  baseline: z.string().nullable(),
  /** The profile's job name. */
  jobName: z.string(),
  /** One outcome per budget, in report order. */
  rules: z.array(RuleOutcomeSchema),
  /** Rules failed at level error. */
  failed: z.number().int().nonnegative(),
  /** Rules failed at level warn. */
  warned: z.number().int().nonnegative(),
  /** Set when a mode of the profile ended because the job failed; else null. */
  jobFailure: z.string().nullable(),
  /** The process's exit code: 0 pass, 1 a budget failed, 5 the job failed. */
  exitCode: z.number().int().nonnegative(),
});
export type GateOutput = z.infer<typeof GateOutputSchema>;

/** What the gate core returns with the paths it read: the output without its header. */
export type GateOutputBody = Omit<GateOutput, 'schemaVersion' | 'kind'>;
