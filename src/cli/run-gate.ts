/**
 * The gate as one call: evaluate the budgets on a profile, print the verdict,
 * write JUnit XML and the GitHub step summary. `gate` and `profile --gate`
 * both go through here.
 */
import type { GateOptions } from '../gate/options.js';
import { profileDifferences } from '../compare/differences.js';
import { evaluateGate } from '../gate/rules.js';
import { writeJunit } from '../report/gate-junit.js';
import { appendStepSummary, stepSummaryMarkdown } from '../report/gate-step-summary.js';
import { renderVerdict } from '../report/gate-terminal.js';
import type { Profile } from '../schema/profile.js';
import { gateOutput } from '../schema/output-headers.js';

/** What runGate may touch: output and the environment (GITHUB_STEP_SUMMARY). */
export interface GateIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
}

/**
 * Gates one profile: prints the verdict (stdout), writes JUnit XML when asked,
 * appends Markdown to $GITHUB_STEP_SUMMARY when set, and returns the exit code
 * (0 pass, 1 a budget failed, 5 the job failed). `baseline` is the profile
 * at options.baselinePath, read by the caller (readProfile or loadProfile:
 * a missing or corrupt one is a UserError, 4 or 7), null without one.
 */
export function runGate(
  profile: Profile,
  profilePath: string,
  options: GateOptions,
  io: GateIo,
  baseline: Profile | null,
): number {
  const verdict = evaluateGate(profile, options.budgets, baseline, options.epochs);
  if (options.json) {
    io.stdout(
      JSON.stringify(gateOutput({ profile: profilePath, baseline: options.baselinePath, ...verdict }), null, 1) + '\n',
    );
  } else {
    io.stdout(renderVerdict(verdict, profilePath, options.baselinePath));
  }
  if (options.junitPath) writeJunit(options.junitPath, verdict, profilePath);
  const summaryPath = io.env.GITHUB_STEP_SUMMARY;
  if (summaryPath) {
    try {
      appendStepSummary(summaryPath, stepSummaryMarkdown(verdict, profilePath, options.baselinePath));
    } catch (error) {
      io.stderr(
        `ds-analyzer: warning: cannot append to GITHUB_STEP_SUMMARY '${summaryPath}': ${(error as Error).message}\n`,
      );
    }
  }
  const differences = baseline ? profileDifferences(baseline, profile) : [];
  if (differences.length > 0)
    io.stderr(`ds-analyzer: note: the baseline is another job or setting (${differences.join('; ')})\n`);
  if (verdict.jobFailure) io.stderr(`ds-analyzer: ${verdict.jobFailure}: see the job's logs beside the profile\n`);
  return verdict.exitCode;
}
