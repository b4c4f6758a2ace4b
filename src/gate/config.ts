/**
 * The gate's budgets: from a config file (strict: unknown keys are errors) and
 * from flags, which override the file rule by rule. Levels follow Lighthouse
 * CI assertions: 'error' fails the gate, 'warn' reports only, 'off' skips.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { ExitCode, UserError } from '../errors.js';

/** How a failed budget counts. */
export const LevelSchema = z.enum(['error', 'warn', 'off']);
export type Level = z.infer<typeof LevelSchema>;

const PERCENT = /^\s*(\d+(?:\.\d+)?)\s*%\s*$/;

/** A share written as 0.2 or '20%'. */
const ShareSchema = z.union([
  z.number().finite().nonnegative(),
  z.string().regex(PERCENT, "a percentage like '20%'").transform((text) => Number(PERCENT.exec(text)![1]) / 100),
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
    timeToFirstBatch: z.strictObject({ level: LevelSchema.default('error'), maxSec: z.number().finite().positive() }).optional(),
  }),
});
export type GateConfig = z.infer<typeof GateConfigSchema>;

/** Names of the rules, in the order they are reported. */
export const RULE_IDS = ['fetchStall', 'prepStall', 'totalStall', 'checkpointStall', 'timeToFirstBatch', 'throughput', 'regression'] as const;
export type RuleId = (typeof RULE_IDS)[number];

/** One budget after merging file and flags. */
export interface Budget {
  /** error | warn (rules at 'off' are dropped before evaluation). */
  level: 'error' | 'warn';
  /** The limit: a share (stalls, regression), samples/s (throughput) or seconds (time to the first batch). */
  limit: number;
  /** Where the budget came from, for messages: a flag or the config file. */
  source: string;
}

/** The budgets a gate runs with; a missing key means no such rule. */
export type Budgets = Partial<Record<RuleId, Budget>>;

/** The regression limit used when --baseline is given without --max-regression. */
export const DEFAULT_MAX_REGRESSION = 0.05;

/** Reads and validates a gate config file; every problem is one line naming the file, the key and the fix. */
export function readGateConfig(path: string): GateConfig {
  if (!existsSync(path)) {
    throw new UserError(`gate config '${path}' does not exist: pass an existing file to --config (see docs/ci.md)`, ExitCode.MissingInput);
  }
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    const why = error instanceof Error ? error.message.split('\n')[0] : 'parse error';
    throw new UserError(`gate config '${path}' is not valid JSON (${why}): fix the file (see docs/ci.md)`, ExitCode.BadValue);
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
    const allowed = at === '(top level)' ? 'baseline, budgets' : at === 'budgets' ? RULE_IDS.join(', ') : 'level, max (min for throughput, maxSec for timeToFirstBatch)';
    what = `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `'${k}'`).join(', ')} at ${at}; allowed: ${allowed}`;
  } else if (issue.path.at(-1) === 'level') {
    what = `${at} must be one of error, warn, off`;
  } else {
    what = `${at}: ${issue.message}`;
  }
  throw new UserError(`gate config '${where}': ${what} (see docs/ci.md)`, ExitCode.BadValue);
}

/** Flags of `gate` (and `profile --gate`) that set budgets; parsed values. */
export interface BudgetFlags {
  maxFetchStall?: number;
  maxPrepStall?: number;
  maxTotalStall?: number;
  minThroughput?: number;
  maxRegression?: number;
  maxCheckpointStall?: number;
  maxTimeToFirstBatch?: number;
}

const FLAG_OF: Record<RuleId, keyof BudgetFlags> = {
  fetchStall: 'maxFetchStall',
  prepStall: 'maxPrepStall',
  totalStall: 'maxTotalStall',
  throughput: 'minThroughput',
  regression: 'maxRegression',
  checkpointStall: 'maxCheckpointStall',
  timeToFirstBatch: 'maxTimeToFirstBatch',
};

/** The flag that sets a rule, for messages: --max-fetch-stall. */
export function flagName(rule: RuleId): string {
  return '--' + FLAG_OF[rule].replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
}

/**
 * Merges the config file's budgets with flags (a flag wins, at level error)
 * and drops rules at level 'off'. `baselinePath` comes back resolved: the
 * flag's relative to cwd, the file's relative to the file.
 */
export function resolveBudgets(
  config: GateConfig | null,
  configPath: string | null,
  flags: BudgetFlags,
  baselineFlag: string | null,
  cwd: string,
): { budgets: Budgets; baselinePath: string | null } {
  const budgets: Budgets = {};
  for (const rule of RULE_IDS) {
    const flagValue = flags[FLAG_OF[rule]];
    if (flagValue !== undefined) {
      budgets[rule] = { level: 'error', limit: flagValue, source: flagName(rule) };
      continue;
    }
    const fromFile = config?.budgets[rule];
    if (!fromFile || fromFile.level === 'off') continue;
    const limit = 'min' in fromFile ? fromFile.min : 'maxSec' in fromFile ? fromFile.maxSec : fromFile.max;
    budgets[rule] = { level: fromFile.level, limit, source: `${configPath ?? 'config'}: budgets.${rule}` };
  }
  const baselinePath = baselineFlag
    ? resolve(cwd, baselineFlag)
    : config?.baseline && configPath
      ? resolve(dirname(configPath), config.baseline)
      : null;
  const regressionOff = config?.budgets.regression?.level === 'off' && flags.maxRegression === undefined;
  if (baselinePath && !budgets.regression && !regressionOff) {
    budgets.regression = { level: 'error', limit: DEFAULT_MAX_REGRESSION, source: `default with --baseline` };
  }
  if (budgets.regression && !baselinePath) {
    throw new UserError(
      `a regression budget (${budgets.regression.source}) needs a baseline profile: pass --baseline FILE or set "baseline" in the config`,
      ExitCode.Usage,
    );
  }
  return { budgets, baselinePath: budgets.regression ? baselinePath : null };
}
