/**
 * The gate's config file: its schema (zod) and its reading, apart from config.ts so that a gate without --config never
 * loads zod.
 */
import { existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { ExitCode, UserError } from '../errors.js';
import { RULE_IDS } from './rule-ids.js';
import { GATE_TEXT } from './gate-text.js';

/** How a failed budget counts. */
export const LevelSchema = z.enum(['error', 'warn', 'off']);

const PERCENT = /^\s*(\d+(?:\.\d+)?)\s*%\s*$/;

/** A share written as 0.2 or '20%'. */
const ShareSchema = z.union([
  z.number().finite().nonnegative(),
  z
    .string()
    .regex(PERCENT, "a percentage like '20%'")
    .transform((text) => Number(PERCENT.exec(text)![1]) / 100),
]);

const stallBudget = () =>
  z.strictObject({
    /** error | warn | off (default error). */
    level: LevelSchema.default('error'),
    /** Largest allowed share of the iteration time: 0.2 or '20%'. */
    max: ShareSchema.refine((v) => v <= 1, 'a share of the iteration time must be at most 100%'),
  });

/** The gate config file, as users write it (JSON). */
export const GateConfigSchema = z.strictObject({
  /** Baseline profile for the regression rule, relative to the config file. */
  baseline: z.string().min(1).optional(),
  /** Which epochs the pace rules judge: 'first' (the dataset cold, the default) or 'later' (epochs 2+). */
  epochs: z.enum(['first', 'later']).optional(),
  budgets: z.strictObject({
    /** Fetch stall (storage) as a share of the cold iteration time. */
    fetchStall: stallBudget().optional(),
    /** Prep stall (CPU pre-processing) as a share of the cold iteration time. */
    prepStall: stallBudget().optional(),
    /** Fetch + prep stall as a share of the cold iteration time. */
    totalStall: stallBudget().optional(),
    /** Lowest allowed training throughput (cold mode), samples/s. */
    throughput: z.strictObject({ level: LevelSchema.default('error'), min: z.number().finite().positive() }).optional(),
    /** Largest allowed growth of the cold iteration time over the baseline, beyond noise. */
    regression: z.strictObject({ level: LevelSchema.default('error'), max: ShareSchema }).optional(),
    /** Checkpoint saves, amortised per iteration, as a share of the real iteration time. */
    checkpointStall: stallBudget().optional(),
    /** Longest allowed time from the training loader's iter() to its first batch (cold mode), seconds. */
    timeToFirstBatch: z
      .strictObject({ level: LevelSchema.default('error'), maxSec: z.number().finite().positive() })
      .optional(),
  }),
});
export type GateConfig = z.infer<typeof GateConfigSchema>;

/** Reads and validates a gate config file; every problem is one line naming the file, the key and the fix. */
export function readGateConfig(path: string): GateConfig {
  if (!existsSync(path)) {
    throw new UserError(GATE_TEXT.configMissing(path), ExitCode.MissingInput);
  }
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    const why = error instanceof Error ? error.message.split('\n')[0] : 'parse error';
    throw new UserError(GATE_TEXT.configNotJson(path, why), ExitCode.BadValue);
  }
  return parseGateConfig(json, path);
}

/** Validates a parsed config object; `where` names it in messages. */
export function parseGateConfig(json: unknown, where: string): GateConfig {
  const parsed = GateConfigSchema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const at = issue.path.join('.') || '(top level)';
  let what: string;
  if (issue.code === 'unrecognized_keys') {
    const allowed =
      at === '(top level)' ? GATE_TEXT.allowedTop : at === 'budgets' ? RULE_IDS.join(', ') : GATE_TEXT.allowedInBudget;
    what = GATE_TEXT.unknownKeys(issue.keys, at, allowed);
  } else if (issue.path.at(-1) === 'level') {
    what = GATE_TEXT.badLevel(at);
  } else {
    what = `${at}: ${issue.message}`;
  }
  throw new UserError(GATE_TEXT.configInvalid(where, what), ExitCode.BadValue);
}
