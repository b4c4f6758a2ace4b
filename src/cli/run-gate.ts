/**
 * The gate as one call: evaluate the budgets on a profile, print the verdict, write JUnit XML and the GitHub step
 * summary. `gate` and `profile --gate` both go through here.
 */
import { appendFileSync } from 'node:fs';
import type { GateOptions } from '../gate/options.js';
import { profileDifferences } from '../compare/differences.js';
import { GATE_TEXT } from '../gate/gate-text.js';
import { evaluateGate, type GateVerdict } from '../gate/rules.js';
import { writeJunit } from '../report/gate-junit.js';
import { stepSummaryMarkdown } from '../report/gate-step-summary.js';
import { renderVerdict } from '../report/gate-terminal.js';
import type { Profile } from '../schema/profile.js';
import { gateOutput } from '../schema/output-headers.js';
import type { Io } from './io.js';

/** What runGate may touch: output and the environment (GITHUB_STEP_SUMMARY). */
type GateIo = Pick<Io, 'stdout' | 'stderr' | 'env'>;

/**
 * Gates one profile: prints the verdict (stdout), writes JUnit XML when asked, appends Markdown to $GITHUB_STEP_SUMMARY
 * when set, and returns the exit code (0 pass, 1 a budget failed, 5 the job failed). `baseline` is the profile at
 * options.baselinePath, read by the caller (readProfile or loadProfile: a missing or corrupt one is a UserError, 4 or
 * 7), null without one.
 */
export function runGate(
  profile: Profile,
  profilePath: string,
  options: GateOptions,
  io: GateIo,
  baseline: Profile | null,
): number {
  const verdict = evaluateGate(profile, options.budgets, baseline, options.epochs, options.betweenRuns ?? null);
  emitVerdict(verdict, profilePath, options, io);
  const differences = baseline ? profileDifferences(baseline, profile) : [];
  if (differences.length > 0) io.stderr(`ds-analyzer: ${GATE_TEXT.baselineDiffers(differences)}\n`);
  return verdict.exitCode;
}

/**
 * Prints a verdict (the table, or with options.json its JSON with `extra` fields), writes JUnit XML when asked and
 * appends Markdown to $GITHUB_STEP_SUMMARY when set: what every gate does with its verdict.
 */
export function emitVerdict(
  verdict: GateVerdict,
  profilePath: string,
  options: Pick<GateOptions, 'baselinePath' | 'json' | 'junitPath'>,
  io: GateIo,
  extra: Record<string, unknown> = {},
): void {
  if (options.json) {
    const body = gateOutput({ profile: profilePath, baseline: options.baselinePath, ...verdict });
    io.stdout(JSON.stringify({ ...body, ...extra }, null, 1) + '\n');
  } else {
    io.stdout(renderVerdict(verdict, profilePath, options.baselinePath));
  }
  if (options.junitPath) writeJunit(options.junitPath, verdict, profilePath);
  const summaryPath = io.env.GITHUB_STEP_SUMMARY;
  if (summaryPath) {
    try {
      appendFileSync(summaryPath, stepSummaryMarkdown(verdict, profilePath, options.baselinePath));
    } catch (error) {
      io.stderr(
        `ds-analyzer: warning: cannot append to GITHUB_STEP_SUMMARY '${summaryPath}': ${(error as Error).message}\n`,
      );
    }
  }
  if (verdict.jobFailure) io.stderr(`ds-analyzer: ${verdict.jobFailure}: see the job's logs beside the profile\n`);
}
