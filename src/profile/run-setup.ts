// What profile, validate and the overlap probe do alike around their runs of the job: DAMON's reclaim paused, the
// data's read throttle, each run started with the shared settings under the user's interrupts, and what a finished run
// says (a failed job's log tail, whether it ran the loader workers asked).
import { workersApplied } from '../analysis/workers-applied.js';
import type { ModeResult } from '../schema/profile.js';
import { ExitCode, UserError } from '../errors.js';
import { PROFILE_RUN_TEXT, RECLAIM_TEXT } from './run-text.js';
import { pauseReclaimers, reclaimingDamonSchemes } from '../system/cgroups/damon.js';
import { reclaimPauseFile } from '../paths.js';
import type { Dataset } from '../system/dataset/dataset.js';
import type { Throttle, Throttling } from './data-sources/throttle.js';
import type { Interrupts } from './interrupts.js';
import type { Job } from './supervisor.js';
import { tail } from './log-tail.js';
import type { ModeRunInput } from './run-input.js';
import type { LaunchInput, LaunchOutcome } from './run-launch.js';
import { SUPERVISION } from './run-defaults.js';

/** Runs one mode of the job: runMode, or a test's deterministic fake. */
export type ModeRunner = (input: ModeRunInput) => Promise<ModeResult>;

/** Runs one launch of several modes: runLaunch, or a test's fake. */
export type LaunchRunner = (input: LaunchInput) => Promise<LaunchOutcome>;

/** The command whose runs are set up: it words the notes. */
export type RunCommand = 'profile' | 'validate';

/** DAMON's proactive reclaim, paused for a command's runs (or not), and what to tell the user. */
export interface ReclaimPause {
  /** What the user should know: what was paused, or what still runs and why. */
  warnings: string[];
  /** Turns the paused reclaimers back on; idempotent. */
  restore(): void;
}

/**
 * Pauses DAMON's proactive reclaim where it runs and this process may, unless `wanted` is false: it evicts the warmed
 * dataset under the cached mode and costs CPU. A guardian turns it back on if this process is killed
 * (system/cgroups/damon.ts).
 */
export function pauseReclaim(wanted: boolean, command: RunCommand, env: NodeJS.ProcessEnv): ReclaimPause {
  const reclaimers = reclaimingDamonSchemes();
  // Recorded on disk too, so that `ds-analyzer clean` can restore a pause whose guardian died with its run.
  const paused = reclaimers.length > 0 && wanted ? pauseReclaimers(undefined, undefined, reclaimPauseFile(env)) : null;
  const text = RECLAIM_TEXT[command];
  const warnings: string[] = [];
  if (paused && paused.paused.length > 0) warnings.push(text.paused(paused.paused.join(' and ')));
  if (reclaimers.length > 0 && (paused === null || paused.failures.length > 0)) {
    warnings.push(
      text.running(reclaimers.join('; '), paused ? ` (could not pause: ${paused.failures.join('; ')})` : text.kept),
    );
  }
  return { warnings, restore: () => paused?.restore() };
}

/** The data's read throttle at `bytesPerSec`, or null without one (see throttleReads). */
export async function startThrottle(
  source: Partial<Throttling>,
  dataset: Dataset,
  bytesPerSec: number | null,
  name: string,
  env: NodeJS.ProcessEnv,
): Promise<Throttle | null> {
  return bytesPerSec ? throttleReads(source, dataset, bytesPerSec, name, env) : null;
}

/**
 * The data's reads held to `bytesPerSec`; a UserError saying why where the source cannot throttle them, before any run:
 * a run at another bandwidth than asked is no measurement of it.
 */
export async function throttleReads(
  source: Partial<Throttling>,
  dataset: Dataset,
  bytesPerSec: number,
  name: string,
  env: NodeJS.ProcessEnv,
): Promise<Throttle> {
  if (!source.throttle) throw new UserError(PROFILE_RUN_TEXT.noThrottle, ExitCode.Environment);
  return source.throttle.start(dataset, bytesPerSec, name, env);
}

/** What every run of a command shares. */
export type SharedRunSettings = Pick<
  ModeRunInput,
  | 'cwd'
  | 'env'
  | 'runAs'
  | 'dataset'
  | 'dataSource'
  | 'timeoutSec'
  | 'firstIterationTimeoutSec'
  | 'hangTimeoutSec'
  | 'stopGraceSec'
  | 'killGraceSec'
  | 'sync'
  | 'pollMs'
  | 'gpu'
>;

/** How a command's runs are watched and stopped, where it sets them; SUPERVISION's defaults otherwise. */
export type Supervision = Partial<
  Pick<
    SharedRunSettings,
    'firstIterationTimeoutSec' | 'hangTimeoutSec' | 'stopGraceSec' | 'killGraceSec' | 'sync' | 'pollMs'
  >
>;

/** The settings every run of a command shares: its job, data and limits, SUPERVISION's defaults for the rest. */
export function sharedRunSettings(
  command: Pick<SharedRunSettings, 'cwd' | 'env' | 'runAs' | 'dataSource' | 'timeoutSec'> & Supervision,
  dataset: Dataset,
  gpu?: SharedRunSettings['gpu'],
): SharedRunSettings {
  return {
    cwd: command.cwd,
    env: command.env,
    ...(command.runAs ? { runAs: command.runAs } : {}),
    dataset,
    dataSource: command.dataSource,
    timeoutSec: command.timeoutSec,
    firstIterationTimeoutSec: command.firstIterationTimeoutSec ?? SUPERVISION.firstIterationTimeoutSec,
    hangTimeoutSec: command.hangTimeoutSec ?? SUPERVISION.hangTimeoutSec,
    stopGraceSec: command.stopGraceSec ?? SUPERVISION.stopGraceSec,
    killGraceSec: command.killGraceSec ?? SUPERVISION.killGraceSec,
    sync: command.sync ?? SUPERVISION.sync,
    pollMs: command.pollMs ?? SUPERVISION.pollMs,
    gpu,
  };
}

/** What one run sets on top of the shared settings. */
export type RunRequest = Omit<ModeRunInput, keyof SharedRunSettings | 'interrupted'>;

/** What a runner of the job is handed beyond its request: the shared settings, and the user's interrupts. */
type UnderInterrupts = SharedRunSettings & { onJobStarted?: (job: Job) => void; interrupted: () => boolean };

/** Starts runs with the shared settings under the user's interrupts: a Ctrl-C stops the running job. */
export function jobRunner(
  settings: SharedRunSettings,
  runner: ModeRunner,
  interrupts: Interrupts,
): (run: RunRequest) => Promise<ModeResult> {
  return underInterrupts<RunRequest, ModeResult>(settings, runner, interrupts);
}

/** What one launch sets on top of the shared settings. */
export type LaunchRequest = Omit<LaunchInput, keyof SharedRunSettings | 'interrupted'>;

/** Starts launches with the shared settings under the user's interrupts, as jobRunner starts runs. */
export function launchRunner(
  settings: SharedRunSettings,
  runner: LaunchRunner,
  interrupts: Interrupts,
): (launch: LaunchRequest) => Promise<LaunchOutcome> {
  return underInterrupts<LaunchRequest, LaunchOutcome>(settings, runner, interrupts);
}

function underInterrupts<R extends { onJobStarted?: (job: Job) => void }, O>(
  settings: SharedRunSettings,
  runner: (input: R & UnderInterrupts) => Promise<O>,
  interrupts: Interrupts,
): (request: R) => Promise<O> {
  return async (request) => {
    const outcome = await runner({
      ...settings,
      ...request,
      onJobStarted: (job: Job) => {
        interrupts.attach(job);
        request.onJobStarted?.(job);
      },
      interrupted: () => interrupts.interrupted,
    });
    interrupts.detach();
    return outcome;
  };
}

/** The end of a run's log (stderr, else stdout) when the job did not end well; null when it did. */
export function failureTail(result: ModeResult, lines: number): string | null {
  if (result.status === 'ok') return null;
  return tail(result.logs.stderr, lines) || tail(result.logs.stdout, lines) || null;
}

/** What a run's end means for the schedule, the same on every node of a profile (node-link.ts). */
export interface RunVerdict {
  /** The loader workers the job ran instead of those asked ('2, 2' per rank): the sweep ends; null: applied. */
  workersNotApplied: string | null;
  /** Whether the schedule goes on: a failed or interrupted run ends it. */
  status: ModeResult['status'];
  /** The run stalled (on any node: analysis/stalls.ts): the schedule ends there too. */
  stalled: boolean;
}

/** The verdict on a run that asked for `workers` loader workers (null: the script's own). */
export function runVerdict(result: ModeResult, workers: number | null): RunVerdict {
  return {
    status: result.status,
    stalled: result.stalled !== undefined,
    workersNotApplied: workers === null ? null : workersNotApplied(result, workers),
  };
}

/** The workers the job reported, as 'a, b' per rank, where it did not run `asked`; null when it did or failed. */
export function workersNotApplied(result: ModeResult, asked: number): string | null {
  if (result.status !== 'ok' || workersApplied(result, asked)) return null;
  return result.ranks.map((r) => r.workers ?? 'no').join(', ');
}
