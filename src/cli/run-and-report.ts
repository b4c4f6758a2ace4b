import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import { SUPERVISION } from '../profile/run-defaults.js';
import {
  runProfile,
  type ProfileRunHooks,
  type ProfileRunInput,
  type ProfileRunOutcome,
} from '../profile/run-profile.js';
import { allRuns, failedBeforeAnyIteration, iterationsSeen } from '../profile/run-outcome.js';
import { createProgress } from '../report/progress.js';
import { renderSummary } from '../report/terminal.js';
import type { Io } from './io.js';
import { OUTCOME_TEXT } from './outcome-text.js';
import { STALL_TEXT } from '../analysis/stall-text.js';
import type { ModeResult } from '../schema/profile.js';
import { artefactsDir } from '../store/profile-files.js';
import { hostnamesOf, redactProfile, Redactor, type RedactionPlaces } from '../store/redact.js';
import { redactLogs } from '../store/redact-logs.js';

/**
 * Runs a profile with live progress on stderr, then prints the summary (or, with json, only the profile on stdout) and
 * explains a failure.
 */
export async function runAndReport(
  input: ProfileRunInput,
  io: Io,
  options: { json: boolean; redact?: RedactionPlaces },
): Promise<{ exitCode: number; outcome: ProfileRunOutcome }> {
  const shownWarnings = new Set<string>();
  // --redact: what is printed, live lines included (notes name the run's folders), holds no absolute path either.
  const shown = options.redact
    ? redactingIo(io, new Redactor(options.redact, [hostname()], input.argv), options.json)
    : io;
  const measured = await runProfile(input, profileProgressHooks(shown, shownWarnings));
  // --redact: what is shown is what was written, and the job's logs follow the profile.
  const outcome = options.redact ? redactOutcome(measured, input, options.redact, shown) : measured;
  return {
    exitCode: reportProfileOutcome(outcome, shown, {
      json: options.json,
      firstIterationTimeoutSec: input.firstIterationTimeoutSec,
      // The summary's warnings are the redacted profile's: those shown live, redacted as they were written.
      shownWarnings: options.redact
        ? new Set(
            [...shownWarnings].map(
              (w) => redactProfile({ ...measured.profile, warnings: [w] }, options.redact!).warnings[0],
            ),
          )
        : shownWarnings,
    }),
    outcome,
  };
}

/** The io with --redact applied to what it prints; with --json, stdout's profile is redacted already. */
function redactingIo(io: Io, redactor: Redactor, json: boolean): Io {
  return {
    ...io,
    stdout: json ? io.stdout : (text) => io.stdout(redactor.text(text)),
    stderr: (text) => io.stderr(redactor.text(text)),
  };
}

/** The outcome as --redact shows it, the job's saved logs redacted the same way (said on stderr). */
function redactOutcome(
  outcome: ProfileRunOutcome,
  input: ProfileRunInput,
  places: RedactionPlaces,
  io: Io,
): ProfileRunOutcome {
  const outFile = input.outFile;
  const redactor = new Redactor(places, hostnamesOf(outcome.profile), input.argv);
  const logs = redactLogs(artefactsDir(outFile), redactor);
  if (logs > 0)
    io.stderr(
      `ds-analyzer: --redact: the job's ${logs} logs and event files ` +
        `under ${redactor.path(artefactsDir(outFile))} were redacted as the profile was\n`,
    );
  const failureTail = outcome.failureTail === null ? null : redactor.text(outcome.failureTail);
  return {
    ...outcome,
    profile: redactProfile(outcome.profile, places),
    path: redactor.path(outcome.path),
    failureTail,
  };
}

/** Hooks of a profile run that show its live progress on stderr. */
export function profileProgressHooks(io: Io, shownWarnings?: Set<string>): ProfileRunHooks {
  const progress = createProgress(io.stderr, io.isTTY);
  return {
    onModeStart: (label, inLaunch) =>
      progress.line(inLaunch ? `${label}: state set; the running job switched modes` : `${label}: starting the job`),
    onProgress: (p) => progress.update(p),
    onDownload: (p) => progress.download(p),
    onModeDone: (result) =>
      progress.line(
        `${runName(result)}: ${result.status} (${result.stopReason}) after ${result.wallSec.toFixed(1)} s, ` +
          `${result.summary?.measuredIterations ?? 0} measured iterations` +
          // A failed run's cache state proves nothing worth a word: the failure follows.
          (result.stalled
            ? `; STALLED: ${result.stalled.text}`
            : result.status === 'failed'
              ? ''
              : `; state ${result.state.proven ? 'proven' : 'UNPROVEN'}`),
      ),
    onNote: (message) => progress.line(`note: ${message}`),
    onWarning: (message) => {
      shownWarnings?.add(message);
      progress.line(`warning: ${message}`);
    },
    onSignal: (handler) => io.onSignal(handler),
  };
}

/**
 * Prints a profile run's outcome: the summary (or, with json, only the profile on stdout), then the failure explained;
 * returns the exit code.
 * `firstIterationTimeoutSec` is the run's, when it set one.
 */
export function reportProfileOutcome(
  outcome: ProfileRunOutcome,
  io: Io,
  options: { json: boolean; firstIterationTimeoutSec?: number; shownWarnings?: ReadonlySet<string> },
): number {
  if (options.json) {
    io.stdout(JSON.stringify(outcome.profile, null, 1) + '\n');
  } else if (!failedBeforeAnyIteration(outcome)) {
    // A job that failed before its first iteration has no table, verdict or advice to show: only the failure, below.
    // The warnings that went to stderr as they came (profileProgressHooks) are not printed again under the summary.
    io.stdout('\n' + renderSummary(outcome.profile, outcome.path, { shownWarnings: options.shownWarnings }));
  }
  return explainOutcome(outcome, io, options.firstIterationTimeoutSec ?? SUPERVISION.firstIterationTimeoutSec);
}

/** 'cold', 'cached at 1 CPU(s)', or 'overlap probe (45% resident)'. */
function runName(result: ModeResult & { residentShare?: number }): string {
  if (result.residentShare !== undefined)
    return `overlap probe (cold, ${(result.residentShare * 100).toFixed(0)}% held resident)`;
  return result.cpus ? `${result.mode} at ${result.cpus.length} CPU(s)` : result.mode;
}

function explainOutcome(outcome: ProfileRunOutcome, io: Io, firstIterationTimeoutSec: number): number {
  const runs = allRuns(outcome.profile);
  const failed = runs.find((m) => m.status === 'failed') ?? runs.find((m) => m.status !== 'ok');
  const saved = Object.values(outcome.profile.modes)
    .filter((m) => m.status === 'ok' && !m.stalled)
    .map((m) => m.mode);
  const nothing = failedBeforeAnyIteration(outcome);
  const savedText = nothing
    ? `nothing was measured (the partial profile is saved in ${outcome.path})`
    : saved.length
      ? `the ${saved.join(' and ')} mode${saved.length > 1 ? 's are' : ' is'} saved in ${outcome.path}`
      : `no mode completed (what was measured is in ${outcome.path})`;
  if (outcome.exitCode === ExitCode.Interrupted) {
    io.stderr(`ds-analyzer: interrupted; ${savedText}\n`);
    return ExitCode.Interrupted;
  }
  const stopped = outcome.nodeLost ?? outcome.stopped;
  if (stopped !== undefined) {
    io.stderr(`ds-analyzer: ${stopped}; ${savedText}\n`);
    return outcome.exitCode;
  }
  const stalled = runs.find((m) => m.stalled);
  // A job that exited with an error is told as a failure first; a hung one was stopped by the watchdog, not failed.
  const stallFirst = stalled?.stalled && (stalled.status !== 'failed' || stalled.stalled.cause === 'hung');
  if (outcome.exitCode === ExitCode.JobFailed && stalled?.stalled && stallFirst) {
    const { text, cause } = stalled.stalled;
    io.stderr(`ds-analyzer: ${OUTCOME_TEXT.stalled(runName(stalled), text, savedText, STALL_TEXT.fix[cause])}\n`);
    io.stderr(`its output: ${stalled.logs.stdout} and ${stalled.logs.stderr}\n`);
    return ExitCode.JobFailed;
  }
  if (outcome.exitCode !== ExitCode.JobFailed || !failed) return outcome.exitCode;
  if (iterationsSeen(failed) === 0 && failed.badEventLines > 0) {
    const eventsDir = join(dirname(failed.logs.stdout), 'events');
    throw new UserError(OUTCOME_TEXT.noProtocolEvent(eventsDir, failed.badEventLines, savedText), ExitCode.CorruptFile);
  }
  const how =
    failed.stopReason === 'timeout'
      ? 'hit the per-mode --timeout'
      : failed.stopReason === 'no-iterations'
        ? noIterationsText(failed.wallSec >= firstIterationTimeoutSec ? firstIterationTimeoutSec : null)
        : failed.jobSignal
          ? `was killed by ${failed.jobSignal}`
          : `exited with code ${failed.jobExitCode}`;
  const when = nothing && failed.stopReason !== 'no-iterations' ? ' before its first iteration' : '';
  io.stderr(`ds-analyzer: the job ${how} in ${runName(failed)} mode${when}; ${savedText}\n`);
  if (failed.stopReason === 'no-iterations') io.stderr(NO_ITERATIONS_FIX);
  if (failed.stalled) io.stderr(`the ${runName(failed)} block also stalled: ${failed.stalled.text}\n`);
  io.stderr(`its output: ${failed.logs.stdout} and ${failed.logs.stderr}\n`);
  if (outcome.failureTail) {
    io.stderr(`last lines of its output:\n${outcome.failureTail.replace(/^/gm, '  | ')}\n`);
  }
  return ExitCode.JobFailed;
}

/** What the job did when no iteration was seen. */
function noIterationsText(timeoutSec: number | null): string {
  return timeoutSec === null
    ? 'ended and no iterations were seen'
    : `was stopped: no iterations were seen within ${timeoutSec} s (--first-iteration-timeout)`;
}

/** How to make a job report iterations. */
const NO_ITERATIONS_FIX =
  'how to fix: a PyTorch script is instrumented automatically once it iterates a torch.utils.data.DataLoader ' +
  '(the job must run a Python that honours PYTHONPATH); a loop without a DataLoader needs the manual API, ' +
  "e.g. 'from ds_analyzer import iterate' then 'for batch in iterate(batches): ...' (docs/pytorch.md); " +
  'any other program can write the event protocol (docs/protocol.md).\n';
