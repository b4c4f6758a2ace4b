// The profile's schedule: the planned runs and launches of the job run in order, each saved as soon as it ends, and how
// the schedule ended (a failed, interrupted or stalled run, a lost node, or all done).
import { localNode } from '../analysis/merge-nodes.js';
import { MIN_STOP_BLOCKS } from '../analysis/stopping.js';
import { ExitCode } from '../errors.js';
import { ENV, type Mode } from '../schema/events.js';
import type { ModeResult } from '../schema/profile.js';
import type { Dataset } from '../system/dataset/dataset.js';
import { withCpus } from '../system/cgroups/affinity.js';
import type { CacheState } from './cache-states/cache-state.js';
import { type Continuing, rodeRun } from './continue-run.js';
import type { Interrupts } from './interrupts.js';
import { iterationsRun, type LaunchPlan, type PlannedRun, type ScheduleRan } from './launch-plan.js';
import { NodeLostError } from './nodes/node-link.js';
import type { NodeRuns } from './nodes/node-runs.js';
import type { ProfileBook } from './profile-book.js';
import type { ProfileRunHooks, ProfileRunInput } from './profile-input.js';
import type { LaunchBlock, LaunchOutcome } from './run-launch.js';
import { failureTail, runVerdict, type RunVerdict } from './run-setup.js';
import { PROFILE_RUN_TEXT } from './run-text.js';
import type { JobExit } from './supervisor.js';

/** One run of the job as the profile asks for it; the shared settings are added by the run set-up. */
export interface ProfileRunRequest {
  mode: Mode;
  /** Folder name and progress label. */
  label: string;
  argv: string[];
  cacheState: CacheState;
  /** Share of the mode's iteration budget (default 1). */
  budgetShare?: number;
  numWorkers?: number;
}

/** What the steps of a profile share while it is measured. */
export interface ProfileSteps {
  input: ProfileRunInput;
  hooks: ProfileRunHooks;
  /** This node's profile, written after each step. */
  book: ProfileBook;
  /** The other nodes of a multi-node profile, kept in step; null on one node. */
  nodes: NodeRuns | null;
  dataset: Dataset;
  /** Runs the job once for the profile. */
  runOnce: (request: ProfileRunRequest) => Promise<ModeResult>;
  /** Starts the job once for several blocks; `label` names the launch's folder. */
  launchOnce: (blocks: LaunchBlock[], label: string) => Promise<LaunchOutcome>;
  interrupts: Interrupts;
  warn: (message: string) => void;
}

/** What the schedule ran so far. */
interface Counts {
  /** Launches of the job the schedule made. */
  launches: number;
  /** Iterations the job ran in them (the most of any rank in each launch). */
  jobIterations: number;
  /** False when the job did not offer to switch modes and each block got a launch of its own. */
  switched?: boolean;
}

/** How the runs ended. */
export interface RunsEnd extends Counts {
  exitCode: ExitCode;
  failureTail: string | null;
  /** Why another node ended this node's runs (exit NodeLost, or JobFailed for a job that failed there), else absent. */
  nodeLost?: string;
  /** profile --continue: the job training on after its blocks, and what they cost it. */
  continuing?: Continuing;
  /** profile --continue, a job that ended before its blocks did: how it ended. */
  jobExit?: Pick<JobExit, 'exitCode' | 'signal'>;
}

/** The plan's launches: the blocks of one launch (where planned), then the runs launched one by one. */
export async function runPlan(steps: ProfileSteps, plan: LaunchPlan): Promise<RunsEnd & { ran: ScheduleRan }> {
  const inLaunch = plan.blocks.length > 0 ? await runLaunchSchedule(steps, plan) : null;
  const alone =
    inLaunch === null ||
    (inLaunch.exitCode === ExitCode.Ok && !steps.interrupts.interrupted && !steps.input.continueRun)
      ? await runSchedule(steps, plan.runs)
      : null;
  const end: RunsEnd =
    alone && inLaunch
      ? {
          ...alone,
          launches: inLaunch.launches + alone.launches,
          jobIterations: inLaunch.jobIterations + alone.jobIterations,
        }
      : (alone ?? inLaunch)!;
  const notSwitched = inLaunch !== null && inLaunch.switched === false;
  if (notSwitched) steps.warn(PROFILE_RUN_TEXT.notSwitchable(inLaunch.launches, steps.nodes !== null));
  const ran: ScheduleRan = {
    schedule: plan.schedule === 'one-launch' && !notSwitched ? 'one-launch' : 'separate-launches',
    reason: notSwitched ? PROFILE_RUN_TEXT.separateNotSwitchable : plan.reason,
    launches: end.launches,
    jobIterations: end.jobIterations,
  };
  return { ...end, ran };
}

/**
 * The planned runs in order, each saved as it ends. A workers count the job did not apply ends the workers sweep; an
 * interrupt or a failed job ends the schedule; every node follows the merged result's verdict.
 */
async function runSchedule(steps: ProfileSteps, runs: readonly PlannedRun[]): Promise<RunsEnd> {
  const { input, hooks, book, nodes, runOnce, interrupts, warn } = steps;
  let workersRefused = false;
  const counts: Counts = { launches: 0, jobIterations: 0 };
  for (const run of runs) {
    if (interrupts.interrupted) break;
    if (run.workers !== null && workersRefused) continue;
    const affinity = run.cpuCount === null ? null : withCpus(run.cpuCount, input.argv, input.env.PATH);
    let result: ModeResult;
    let verdict: RunVerdict;
    try {
      result = await runOnce({
        mode: run.mode,
        label: run.label,
        argv: affinity?.argv ?? input.argv,
        cacheState: input.dataSource.modeState,
        budgetShare: run.budgetShare,
        ...(run.workers !== null ? { numWorkers: run.workers } : {}),
      });
      counts.launches++;
      counts.jobIterations += iterationsRun(result);
      result.cpus = affinity?.cpus ?? null;
      const own = runVerdict(result, run.workers);
      if (own.workersNotApplied === null) book.record(run, result);
      hooks.onModeDone?.(result);
      verdict = nodes ? await nodes.settle(run, result, localNode(book.profile.host, result.ranks)) : own;
    } catch (error) {
      return nodeEnd(lostOrThrow(error), interrupts, counts);
    }
    if (verdict.workersNotApplied !== null) {
      workersRefused = true;
      warn(PROFILE_RUN_TEXT.workersNotApplied(ENV.numWorkers, run.workers!, verdict.workersNotApplied));
      // The warning is part of the profile as saved now, not only at the next run.
      for (const written of booksOf(book, nodes)) written.save();
    }
    const ended = statusEnd(verdict.status, run, result, nodes, counts);
    if (ended) return ended;
    // A stalled run (its data stopped coming, its job hung) ends the schedule as a failure does: the runs after it
    // would wait on the same source.
    if (verdict.stalled) return stalledEnd(result, counts);
  }
  return { ...counts, exitCode: ExitCode.Ok, failureTail: null };
}

/**
 * The modes as blocks of as few launches as the job allows, each saved as its launch ends: a job that cannot switch
 * gets a launch a block, one that ended early is launched again for the rest; a failed or interrupted block ends it.
 */
async function runLaunchSchedule(steps: ProfileSteps, plan: LaunchPlan): Promise<RunsEnd> {
  const { input, hooks, book, launchOnce, interrupts, warn } = steps;
  let pending = plan.blocks;
  const counts: Counts = { launches: 0, jobIterations: 0, switched: true };
  let stalled: ModeResult | undefined;
  while (pending.length > 0 && !interrupts.interrupted && stalled === undefined) {
    const batch = counts.switched ? pending : pending.slice(0, 1);
    counts.launches++;
    const outcome = await launchOnce(
      batch.map((run) => ({
        mode: run.mode,
        label: run.label,
        cacheState: input.dataSource.modeState,
        ...runBudget(input, run.budgetShare),
      })),
      batch.length > 1 ? `launch-${counts.launches}` : batch[0].label,
    );
    // A launch of one block has no control file: its job says nothing of switching (a job that ended early).
    if (batch.length > 1) counts.switched &&= outcome.switchable;
    counts.jobIterations += outcome.jobIterations;
    if (input.continueRun)
      return rodeRun(
        outcome,
        batch,
        { book, hooks, warn },
        { launches: counts.launches, jobIterations: counts.jobIterations },
      );
    // Every block saved before the nodes settle them: a node lost meanwhile leaves this node's blocks kept.
    for (const [k, result] of outcome.results.entries()) {
      book.record(batch[k], result);
      hooks.onModeDone?.(result);
    }
    for (const [k, result] of outcome.results.entries()) {
      const ended = await blockEnd(steps, batch[k], result, { ...counts });
      if (ended) return ended;
      // The blocks after a stalled one in the same launch are kept; no launch follows it.
      stalled ??= result.stalled ? result : undefined;
    }
    pending = pending.slice(outcome.results.length);
  }
  if (stalled) return stalledEnd(stalled, counts);
  return { ...counts, exitCode: ExitCode.Ok, failureTail: null };
}

/** The schedule's end after a block (settled with the other nodes), or null to go on. */
async function blockEnd(
  { nodes, book, interrupts }: ProfileSteps,
  run: PlannedRun,
  result: ModeResult,
  counts: Counts,
): Promise<RunsEnd | null> {
  let status = result.status;
  if (nodes) {
    try {
      status = (await nodes.settle(run, result, localNode(book.profile.host, result.ranks))).status;
    } catch (error) {
      return nodeEnd(lostOrThrow(error), interrupts, counts);
    }
  }
  return statusEnd(status, run, result, nodes, counts);
}

/** The schedule's end where a run or block ended `status` (on every node), or null to go on. */
function statusEnd(
  status: ModeResult['status'],
  run: PlannedRun,
  result: ModeResult,
  nodes: NodeRuns | null,
  counts: Counts,
): RunsEnd | null {
  if (status === 'interrupted') return { ...counts, exitCode: ExitCode.Interrupted, failureTail: null };
  if (status !== 'failed') return null;
  // The job failed on another node: the merged profile (the coordinator's) holds that node's run, a node's own not.
  const elsewhere = result.status !== 'failed' && !nodes?.merged;
  return {
    ...counts,
    exitCode: ExitCode.JobFailed,
    failureTail: result.status === 'failed' ? failureTail(result, FAILURE_TAIL_LINES) : null,
    ...(elsewhere ? { nodeLost: PROFILE_RUN_TEXT.failedElsewhere(run.label) } : {}),
  };
}

/** The schedule's end when another node is gone: interrupted where the user interrupted here first. */
function nodeEnd(message: string, interrupts: Interrupts, counts: Counts): RunsEnd {
  return interrupts.userInterrupted
    ? { ...counts, exitCode: ExitCode.Interrupted, failureTail: null }
    : { ...counts, exitCode: ExitCode.NodeLost, failureTail: null, nodeLost: message };
}

/** The schedule's end at a stalled run (analysis/stalls.ts): exit JobFailed, with the job's last lines. */
function stalledEnd(result: ModeResult, counts: Counts): RunsEnd {
  return { ...counts, exitCode: ExitCode.JobFailed, failureTail: failureTail(result, FAILURE_TAIL_LINES) };
}

/** Lines of a failed job's log shown when the profile stops. */
const FAILURE_TAIL_LINES = 20;

/** A lost node's message, for the outcome; any other error goes on up. */
export function lostOrThrow(error: unknown): string {
  if (error instanceof NodeLostError) return error.message;
  throw error;
}

/** Every profile this CLI writes: its own, and on the coordinator's node the merged one. */
export function booksOf(book: ProfileBook, nodes: NodeRuns | null): ProfileBook[] {
  return nodes?.merged ? [book, nodes.merged] : [book];
}

/** Fewest blocks before precision may stop one of several pooled runs (t with 4 df is 2.78, against 2.26 with 9). */
const MIN_POOLED_RUN_BLOCKS = 5;

/**
 * Budget and precision of a run with `share` of a mode's budget: the iteration limits scale with it and the target
 * widens by 1/sqrt(share), so the pooled runs reach the asked precision in the iterations one run would take.
 */
export function runBudget(
  input: Pick<ProfileRunInput, 'precision' | 'minIterations' | 'maxIterations'>,
  share: number,
): { precision: number; minIterations: number; maxIterations: number; minStopBlocks: number } {
  return {
    precision: input.precision / Math.sqrt(share),
    // The pooled runs together hold the blocks one run would need.
    minStopBlocks: Math.max(MIN_POOLED_RUN_BLOCKS, Math.ceil(MIN_STOP_BLOCKS * share)),
    minIterations: Math.max(1, Math.ceil(input.minIterations * share)),
    maxIterations: Math.max(1, Math.ceil(input.maxIterations * share)),
  };
}
