/**
 * The gate's options from its flags and config file, checked before anything runs (`gate` and `profile --gate` both
 * parse them here); cli/run-gate.ts evaluates and renders the verdict with them.
 */
import { resolve } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import type { Profile } from '../schema/profile.js';
import { parseDurationSec, parseFraction, parsePositiveNumber } from '../units.js';
import { optionFlag, resolveBudgets, type BudgetFlags, type Budgets, type GateEpochs } from './config.js';
import { GATE_TEXT } from './gate-text.js';
import type { BetweenRuns } from './between-runs.js';

/** Everything the gate needs besides the profile; built by prepareGate. */
export interface GateOptions {
  /** Budgets after merging config and flags. */
  budgets: Budgets;
  /** Baseline profile for the regression rule (absolute path), or null. */
  baselinePath: string | null;
  /** Where to write JUnit XML, or null. */
  junitPath: string | null;
  /** Print the verdict as JSON on stdout instead of the table. */
  json: boolean;
  /** Which epochs the pace rules judge (--epochs, else the config's epochs, else 'first'). */
  epochs: GateEpochs;
  /** The noise between runs (--noise-history), counted in the regression against the baseline; absent: not counted. */
  betweenRuns?: BetweenRuns | null;
}

/** How each budget flag's text is parsed, in the order they are checked. */
const BUDGET_PARSERS: Record<keyof BudgetFlags, (text: string, flag: string) => number> = {
  maxFetchStall: parseShare,
  maxPrepStall: parseShare,
  maxTotalStall: parseShare,
  minThroughput: parsePositiveNumber,
  maxRegression: parseShare,
  maxCheckpointStall: parseShare,
  maxTimeToFirstBatch: parseDurationSec,
};

/** The budget flags (maxFetchStall ...), in the order of --help. */
export const BUDGET_FLAG_KEYS = Object.keys(BUDGET_PARSERS) as (keyof BudgetFlags)[];

/** The gate's flags as commander hands them over (strings). */
export type RawGateFlags = Partial<Record<keyof BudgetFlags | 'config' | 'baseline' | 'junit' | 'epochs', string>> & {
  json?: boolean;
};

/**
 * Parses flags and the config file into GateOptions. Call it before a long profile run so a bad config fails at once.
 * Throws one-line UserErrors: missing config 4, invalid config or value 3, no budgets or a regression budget without a
 * baseline 2.
 */
export async function prepareGate(raw: RawGateFlags, cwd: string): Promise<GateOptions> {
  const configPath = raw.config ? resolve(cwd, raw.config) : null;
  // The config file's schema (zod) is loaded only for a config file.
  const config = configPath ? (await import('./config-file.js')).readGateConfig(configPath) : null;
  const flags: BudgetFlags = {};
  for (const key of BUDGET_FLAG_KEYS) {
    const text = raw[key];
    if (text !== undefined) flags[key] = BUDGET_PARSERS[key](text, optionFlag(key));
  }
  const { budgets, baselinePath } = resolveBudgets(config, configPath, flags, raw.baseline ?? null, cwd);
  if (Object.keys(budgets).length === 0) {
    throw new UserError(GATE_TEXT.noBudget, ExitCode.Usage);
  }
  const epochs = raw.epochs === undefined ? (config?.epochs ?? 'first') : parseEpochs(raw.epochs);
  return {
    budgets,
    baselinePath,
    junitPath: raw.junit ? resolve(cwd, raw.junit) : null,
    json: Boolean(raw.json),
    epochs,
  };
}

/** --epochs: 'first' or 'later'; anything else a one-line error (exit 3). */
export function parseEpochs(text: string): GateEpochs {
  if (text === 'first' || text === 'later') return text;
  throw new UserError(GATE_TEXT.badEpochs(text), ExitCode.BadValue);
}

/**
 * A profile ready for --epochs later: one written before profiles held their later epochs gets them here (the what-if's
 * model, loaded only then).
 */
export async function withLaterEpochs(profile: Profile, epochs: GateEpochs): Promise<Profile> {
  if (epochs !== 'later' || profile.laterEpochs !== undefined) return profile;
  const { laterEpochs } = await import('../whatif/later-epochs.js');
  return { ...profile, laterEpochs: laterEpochs(profile) };
}

/** A share budget: '20%' or 0.2; 0% is allowed (no stall at all). */
function parseShare(text: string, flag: string): number {
  if (/^\s*0+(\.0+)?\s*%?\s*$/.test(text)) return 0;
  if (/^\s*\d+(\.\d+)?\s*%\s*$/.test(text) && Number.parseFloat(text) >= 100) {
    if (flag === '--max-regression') return Number.parseFloat(text) / 100;
  }
  return parseFraction(text, flag);
}
