/**
 * The gate's budgets: from a config file (strict: unknown keys are errors; its schema is config-file.ts, loaded only
 * for a file) and from flags, which override the file rule by rule. Levels follow Lighthouse CI assertions: 'error'
 * fails the gate, 'warn' reports only, 'off' skips.
 */
import { dirname, resolve } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import type { GateConfig } from './config-file.js';
import { GATE_TEXT } from './gate-text.js';
import { RULE_IDS, type RuleId } from './rule-ids.js';

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

/**
 * Which epochs the rules on the training pace judge (fetch, total stall, throughput, regression): 'first', the dataset
 * cold (the cold mode), or 'later', epochs 2+ (the profile's laterEpochs: the cached pace where the page cache holds
 * the dataset, else the what-if's steady state).
 */
export type GateEpochs = 'first' | 'later';

/** The regression limit used when --baseline is given without --max-regression. */
export const DEFAULT_MAX_REGRESSION = 0.05;

const FLAG_OF = {
  fetchStall: 'maxFetchStall',
  prepStall: 'maxPrepStall',
  totalStall: 'maxTotalStall',
  throughput: 'minThroughput',
  regression: 'maxRegression',
  checkpointStall: 'maxCheckpointStall',
  timeToFirstBatch: 'maxTimeToFirstBatch',
} as const satisfies Record<RuleId, string>;

/** Flags of `gate` (and `profile --gate`) that set budgets; parsed values. */
export type BudgetFlags = Partial<Record<(typeof FLAG_OF)[RuleId], number>>;

/** The command-line flag of an option as commander names it: maxFetchStall → --max-fetch-stall. */
export function optionFlag(key: string): string {
  return `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/**
 * Merges the config file's budgets with flags (a flag wins, at level error) and drops rules at level 'off'.
 * `baselinePath` comes back resolved: the flag's relative to cwd, the file's relative to the file.
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
      budgets[rule] = { level: 'error', limit: flagValue, source: optionFlag(FLAG_OF[rule]) };
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
    throw new UserError(GATE_TEXT.noBaseline(budgets.regression.source), ExitCode.Usage);
  }
  return { budgets, baselinePath: budgets.regression ? baselinePath : null };
}
