/**
 * The gate as one call: evaluate the budgets on a profile, print the verdict,
 * write JUnit XML and the GitHub step summary. `gate` and `profile --gate`
 * both go through here.
 */
import { resolve } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import type { Profile } from '../schema/profile.js';
import { gateOutput } from '../schema/versions.js';
import { parseDurationSec, parseFraction, parsePositiveNumber } from '../units.js';
import { resolveBudgets, type BudgetFlags, type Budgets, type GateEpochs } from './config.js';
import { writeJunit } from './junit.js';
import { evaluateGate } from './rules.js';
import { appendStepSummary, stepSummaryMarkdown } from './step-summary.js';
import { renderVerdict } from './terminal.js';

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
}

/** The gate's flags as commander hands them over (strings). */
export interface RawGateFlags {
  config?: string;
  baseline?: string;
  junit?: string;
  json?: boolean;
  epochs?: string;
  maxFetchStall?: string;
  maxPrepStall?: string;
  maxTotalStall?: string;
  minThroughput?: string;
  maxRegression?: string;
  maxCheckpointStall?: string;
  maxTimeToFirstBatch?: string;
}

/** What runGate may touch: output and the environment (GITHUB_STEP_SUMMARY). */
export interface GateIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
}

/**
 * Parses flags and the config file into GateOptions. Call it before a long
 * profile run so a bad config fails at once. Throws one-line UserErrors:
 * missing config 4, invalid config or value 3, no budgets or a regression
 * budget without a baseline 2.
 */
export async function prepareGate(raw: RawGateFlags, cwd: string): Promise<GateOptions> {
  const configPath = raw.config ? resolve(cwd, raw.config) : null;
  // The config file's schema (zod) is loaded only for a config file.
  const config = configPath ? (await import('./config-file.js')).readGateConfig(configPath) : null;
  const flags: BudgetFlags = {
    maxFetchStall: raw.maxFetchStall === undefined ? undefined : parseShare(raw.maxFetchStall, '--max-fetch-stall'),
    maxPrepStall: raw.maxPrepStall === undefined ? undefined : parseShare(raw.maxPrepStall, '--max-prep-stall'),
    maxTotalStall: raw.maxTotalStall === undefined ? undefined : parseShare(raw.maxTotalStall, '--max-total-stall'),
    minThroughput: raw.minThroughput === undefined ? undefined : parsePositiveNumber(raw.minThroughput, '--min-throughput'),
    maxRegression: raw.maxRegression === undefined ? undefined : parseShare(raw.maxRegression, '--max-regression'),
    maxCheckpointStall: raw.maxCheckpointStall === undefined ? undefined : parseShare(raw.maxCheckpointStall, '--max-checkpoint-stall'),
    maxTimeToFirstBatch: raw.maxTimeToFirstBatch === undefined ? undefined : parseDurationSec(raw.maxTimeToFirstBatch, '--max-time-to-first-batch'),
  };
  const { budgets, baselinePath } = resolveBudgets(config, configPath, flags, raw.baseline ?? null, cwd);
  if (Object.keys(budgets).length === 0) {
    throw new UserError(
      `no budget to check: pass one such as --max-fetch-stall 20% or --baseline FILE, or a --config file with budgets at level error or warn`,
      ExitCode.Usage,
    );
  }
  const epochs = raw.epochs === undefined ? (config?.epochs ?? 'first') : parseEpochs(raw.epochs);
  return { budgets, baselinePath, junitPath: raw.junit ? resolve(cwd, raw.junit) : null, json: Boolean(raw.json), epochs };
}

function parseEpochs(text: string): GateEpochs {
  if (text === 'first' || text === 'later') return text;
  throw new UserError(`--epochs '${text}' is not one of first, later: pass --epochs first (the dataset cold) or --epochs later (epochs 2+)`, ExitCode.BadValue);
}

/**
 * Gates one profile: prints the verdict (stdout), writes JUnit XML when asked,
 * appends Markdown to $GITHUB_STEP_SUMMARY when set, and returns the exit code
 * (0 pass, 1 a budget failed, 5 the job failed). `baseline` is the profile
 * at options.baselinePath, read by the caller (readProfile or loadProfile:
 * a missing or corrupt one is a UserError, 4 or 7), null without one.
 */
export function runGate(profile: Profile, profilePath: string, options: GateOptions, io: GateIo, baseline: Profile | null): number {
  const verdict = evaluateGate(profile, options.budgets, baseline, options.epochs);
  if (options.json) {
    io.stdout(JSON.stringify(gateOutput({ profile: profilePath, baseline: options.baselinePath, ...verdict }), null, 1) + '\n');
  } else {
    io.stdout(renderVerdict(verdict, profilePath, options.baselinePath));
  }
  if (options.junitPath) writeJunit(options.junitPath, verdict, profilePath);
  const summaryPath = io.env.GITHUB_STEP_SUMMARY;
  if (summaryPath) {
    try {
      appendStepSummary(summaryPath, stepSummaryMarkdown(verdict, profilePath, options.baselinePath));
    } catch (error) {
      io.stderr(`ds-analyzer: warning: cannot append to GITHUB_STEP_SUMMARY '${summaryPath}': ${(error as Error).message}\n`);
    }
  }
  if (verdict.jobFailure) io.stderr(`ds-analyzer: ${verdict.jobFailure}: see the job's logs beside the profile\n`);
  return verdict.exitCode;
}

/**
 * A profile ready for --epochs later: one written before profiles held their
 * later epochs gets them here (the what-if's model, loaded only then).
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
