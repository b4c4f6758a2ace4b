// profile --continue: the profile rides the real training run. The blocks run at the job's start; then the job trains
// on unprofiled to its end, with the CLI as its parent (docs/method.md, "Riding the real run").
import { constants as osConstants } from 'node:os';
import type { ModeResult, Profile } from '../schema/profile.js';
import type { ProcessEvents } from './events-reader.js';
import type { Job, JobExit } from './supervisor.js';
import { ExitCode, UserError } from '../errors.js';
import type { Mode } from '../schema/events.js';
import type { Interrupts } from './interrupts.js';
import type { LaunchPlan } from './launch-plan.js';
import type { ProfileBook } from './profile-book.js';
import type { LaunchOutcome } from './run-launch.js';
import type { ProfileRunHooks } from './run-profile.js';
import { failureTail } from './run-setup.js';
import { PROFILE_RUN_TEXT } from './run-text.js';

/** profile --continue: the synthetic blocks' snapshots, from the job's snapshot events. */
export interface HeldState {
  /** Time the training loop spent taking and putting back copies, s (the slowest process). */
  snapshotSec: number;
  /** Largest copy of one process, bytes. */
  snapshotBytes: number;
  /** Blocks (index in the launch) whose state could not be held: they trained on real batches, and why. */
  refused: { index: number; reason: string }[];
}

/** The snapshot events of every process, summed up (HeldState). */
export function heldState(processes: readonly Pick<ProcessEvents, 'snapshots'>[]): HeldState {
  const refused = new Map<number, string>();
  let snapshotSec = 0;
  let snapshotBytes = 0;
  for (const p of processes) {
    const snapshots = p.snapshots;
    snapshotSec = Math.max(snapshotSec, snapshots.reduce((sum, e) => sum + (e.ms ?? 0), 0) / 1000);
    for (const e of snapshots) {
      snapshotBytes = Math.max(snapshotBytes, e.bytes ?? 0);
      if (e.action === 'refused' && !refused.has(e.block)) refused.set(e.block, e.reason ?? '');
    }
  }
  return { snapshotSec, snapshotBytes, refused: [...refused].map(([index, reason]) => ({ index, reason })) };
}

/** What the blocks cost the run they rode (Profile.cost.continued), before the run's end. */
export type ContinuedCost = NonNullable<NonNullable<Profile['cost']>['continued']>;

/** One block of the launch as it ran: its label and result (a refused synthetic block has none in the profile). */
export interface RanBlock {
  label: string;
  result: ModeResult;
}

/**
 * The blocks' cost to the real run (an upper bound): the synthetic blocks' iterations (undone), the snapshots, the time
 * between blocks while a state was set, and the cold blocks' iterations over the cached pace.
 */
export function continuedCost(blocks: readonly RanBlock[], held: HeldState, blocksEndedAt: number): ContinuedCost {
  const refused = new Set(held.refused.map((r) => r.index));
  let syntheticSec = 0;
  let preparationSec = 0;
  for (const [k, { result }] of blocks.entries()) {
    if (result.mode === 'synthetic' && !refused.has(k)) syntheticSec += loopSec(result);
    if (k === 0) continue;
    const previous = blocks[k - 1].result;
    preparationSec += Math.max(0, result.startedAt - (previous.startedAt + previous.wallSec * 1000)) / 1000;
  }
  const cachedMs = meanIterMs(blocks.filter((b) => b.result.mode === 'cached').map((b) => b.result));
  let coldExtraSec = 0;
  for (const { result } of blocks) {
    const coldMs = result.summary?.iterMs.mean;
    if (result.mode !== 'cold' || coldMs === undefined || cachedMs === null) continue;
    coldExtraSec += (paceIterations(result).length * Math.max(0, coldMs - cachedMs)) / 1000;
  }
  const launchStartedAt = blocks[0]?.result.startedAt ?? blocksEndedAt;
  return {
    blocksSec: Math.max(0, blocksEndedAt - launchStartedAt) / 1000,
    syntheticSec,
    snapshotSec: held.snapshotSec,
    snapshotBytes: held.snapshotBytes,
    preparationSec,
    coldExtraSec,
    extraSec: syntheticSec + held.snapshotSec + preparationSec + coldExtraSec,
    refusedBlocks: held.refused.map((r) => ({ label: blocks[r.index]?.label ?? `block ${r.index}`, reason: r.reason })),
  };
}

function paceIterations(result: ModeResult) {
  return result.ranks.find((r) => r.rank === result.paceRank)?.iterations ?? [];
}

/** The training loop's time over a block's iterations (warm-up included: all of it was spent), s. */
function loopSec(result: ModeResult): number {
  return paceIterations(result).reduce((sum, it) => sum + it.waitMs + it.computeMs, 0) / 1000;
}

function meanIterMs(results: readonly ModeResult[]): number | null {
  const means = results.map((r) => r.summary?.iterMs.mean).filter((m): m is number => m !== undefined);
  return means.length > 0 ? means.reduce((a, b) => a + b, 0) / means.length : null;
}

/** The job's end, added to the cost once the run it rode is over. */
export function withRunEnd(cost: ContinuedCost, exit: JobExit, launchStartedAt: number): ContinuedCost {
  return {
    ...cost,
    runSec: Math.max(0, Date.now() - launchStartedAt) / 1000,
    jobExitCode: exit.exitCode,
    jobSignal: exit.signal,
  };
}

/** The CLI's exit code for the run it rode: the job's own, 128 + the signal's number where a signal ended it. */
export function jobExitCode(exit: Pick<JobExit, 'exitCode' | 'signal'>): number {
  if (exit.exitCode !== null) return exit.exitCode;
  const number = exit.signal ? osConstants.signals[exit.signal as NodeJS.Signals] : undefined;
  return number !== undefined ? 128 + number : 1;
}

/** The job training on after its blocks (--continue), what they cost it, and when it started. */
export interface Continuing {
  job: Job;
  blocksEndedAt: number;
  launchStartedAt: number;
  cost: ContinuedCost;
}

/** A plan --continue can ride: its modes as blocks of one launch, and nothing launched after them. */
export function assertRidable(plan: LaunchPlan): void {
  if (plan.schedule !== 'one-launch' || plan.runs.length > 0)
    throw new UserError(PROFILE_RUN_TEXT.continueNeedsOneLaunch(plan.reason), ExitCode.Usage);
}

/** How a ridden launch ended for the schedule (run-profile.ts RunsEnd). */
export interface RodeEnd {
  launches: number;
  jobIterations: number;
  switched: boolean;
  exitCode: ExitCode;
  failureTail: string | null;
  continuing?: Continuing;
  jobExit?: Pick<JobExit, 'exitCode' | 'signal'>;
}

/** The blocks --continue rode, saved, less a synthetic block whose state could not be held (said so). */
export function rodeRun(
  outcome: LaunchOutcome,
  batch: readonly { label: string; mode: Mode; cpuCount: number | null }[],
  { book, hooks, warn }: { book: ProfileBook; hooks: Pick<ProfileRunHooks, 'onModeDone'>; warn: (m: string) => void },
  counts: { launches: number; jobIterations: number },
): RodeEnd {
  const held = outcome.held ?? { snapshotSec: 0, snapshotBytes: 0, refused: [] };
  const refused = new Map(held.refused.map((r) => [r.index, r.reason]));
  let exitCode = ExitCode.Ok;
  let tail: string | null = null;
  for (const [k, result] of outcome.results.entries()) {
    const run = { ...batch[k], workers: null, budgetShare: 1 };
    const why = refused.get(k);
    if (why !== undefined) {
      warn(PROFILE_RUN_TEXT.continueNotHeld(run.label, why));
      continue;
    }
    book.record(run, result);
    hooks.onModeDone?.(result);
    if (result.status === 'interrupted' && exitCode === ExitCode.Ok) exitCode = ExitCode.Interrupted;
    if (result.status === 'failed' && exitCode === ExitCode.Ok) {
      exitCode = ExitCode.JobFailed;
      tail = failureTail(result, 20);
    }
  }
  const end = { ...counts, switched: outcome.switchable, exitCode, failureTail: tail };
  const blocks = outcome.results.map((result, k) => ({ label: batch[k].label, result }));
  if (outcome.continuing) {
    const { job, blocksEndedAt } = outcome.continuing;
    const launchStartedAt = blocks[0]?.result.startedAt ?? blocksEndedAt;
    return {
      ...end,
      continuing: { job, blocksEndedAt, launchStartedAt, cost: continuedCost(blocks, held, blocksEndedAt) },
    };
  }
  const last = outcome.results[outcome.results.length - 1];
  return last ? { ...end, jobExit: { exitCode: last.jobExitCode, signal: last.jobSignal } } : end;
}

/** The run after its blocks: the machine let go, signals passed on, its end recorded; resolves to its exit code. */
export async function trainOn(
  book: ProfileBook,
  continuing: Continuing,
  deps: { interrupts: Interrupts; letGo: () => void; note?: (message: string) => void },
): Promise<number> {
  deps.letGo();
  const logs = book.results()[0]?.logs;
  deps.note?.(PROFILE_RUN_TEXT.trainingOn(book.path, logs ? `${logs.stdout} and ${logs.stderr}` : null));
  deps.interrupts.passOn(continuing.job);
  const exit = await continuing.job.done;
  deps.interrupts.detach();
  const cost = book.profile.cost;
  if (cost?.continued) cost.continued = withRunEnd(cost.continued, exit, continuing.launchStartedAt);
  book.save();
  return jobExitCode(exit);
}
