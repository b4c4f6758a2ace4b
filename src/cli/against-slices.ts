/**
 * gate --against --epochs later: A/B in slices (gate/slices.ts). Each round launches both versions, each profiled in
 * the cached mode, and hands the machine to one at a time: the other's process group is stopped for the slice. Warm-up
 * slices first (the interpreter's start, the first loader workers, the allocator), then measured ones until each
 * version has run 10 s (or --max-iterations) inside them; the gate then ends both jobs as a timeout would, and each
 * profile keeps what its job ran. The rounds in turn (cold) are against-rounds.ts's.
 */
import { join } from 'node:path';
import { ExitCode } from '../errors.js';
import { DEFAULT_SLICED_SEC } from '../gate/against-defaults.js';
import { AGAINST_TEXT } from '../gate/against-text.js';
import type { Arm } from '../gate/paired.js';
import { changeText } from '../gate/against.js';
import { launchOrder, launchPaces, MIN_SLICE_PAIRS, sliceMs, type Slice, type TimedIteration } from '../gate/slices.js';
import { runProfile, type ProfileRunOutcome } from '../profile/run-profile.js';
import { iterationBounds } from '../profile/window-rates.js';
import type { Job } from '../profile/supervisor.js';
import type { ModeResult } from '../schema/profile.js';
import { fixChildrenLayout } from '../system/kernel/personality.js';
import { formatNumber } from '../units.js';
import { noPaceReason, roundFlags, roundHooks, type AgainstPlan, type RoundsRun } from './against-rounds.js';
import type { Io } from './io.js';
import { parseProfileOptions } from './profile-action.js';

/** A sliced round's iteration budget: never reached. */
const UNREACHED_ITERATIONS = 10_000_000;
const ARMS: readonly Arm[] = ['reference', 'candidate'];

/** Runs the sliced rounds; stops at the first round that gives no pace, or at an interrupt. */
export async function runSlicedRounds(plan: AgainstPlan, io: Io): Promise<RoundsRun | 'interrupted'> {
  const run: RoundsRun = { rounds: { rounds: [], unproven: 0, failure: null }, failureTail: null, files: [] };
  const shown = new Set<string>();
  // Launches of one job differed by +3.0% and -4.3% with a random layout, by 1.7% at most without (docs/ci.md).
  const jobIo = { ...io, env: { PYTHONHASHSEED: '0', ...io.env } };
  io.stderr(`${AGAINST_TEXT.layout(fixChildrenLayout(), jobIo.env.PYTHONHASHSEED)}\n`);
  for (let index = 1; index <= plan.pairs; index++) {
    const pair = new SlicedPair();
    const outcomes = await launchPair(plan, index, pair, jobIo, shown);
    if (ARMS.some((arm) => outcomes[arm]?.exitCode === ExitCode.Interrupted)) return 'interrupted';
    // In launch order, as the rounds' paces: the judgement over rounds fits the order's offset (paired.ts).
    const launched = launchOrder(index).filter((arm) => outcomes[arm] !== undefined);
    const modes = {
      reference: outcomes.reference?.profile.modes.cached,
      candidate: outcomes.candidate?.profile.modes.cached,
    };
    const iterations = { reference: timed(modes.reference), candidate: timed(modes.candidate) };
    const measured = pair.endedEarly === null ? launchPaces(pair.slices, iterations) : null;
    const paceOf = (arm: Arm) => measured?.paces.find((p) => p.arm === arm);
    for (const arm of launched) {
      run.files.push({
        round: index,
        arm,
        profile: outcomes[arm]!.path,
        msPerSample: paceOf(arm)?.msPerSample ?? null,
      });
    }
    if (measured === null) {
      const arm = pair.endedEarly ?? launched[0];
      const why = pair.endedEarly === null ? AGAINST_TEXT.slicesTooShort : endedReason(modes[arm], arm);
      run.rounds.failure = AGAINST_TEXT.roundFailed(index, arm, why, outcomes[arm]!.path);
      run.failureTail = outcomes[arm]!.failureTail;
      return run;
    }
    run.rounds.unproven += ARMS.filter((arm) => !modes[arm]!.state.proven).length;
    run.rounds.rounds.push(...launched.map((arm) => paceOf(arm)!));
    const paces = measured.paces.map((p) => formatNumber(p.msPerSample, 3)).join(' → ');
    const { change } = measured;
    io.stderr(`${AGAINST_TEXT.slicedRoundDone(index, plan.pairs, paces, changeText(change), change.pairs)}\n`);
  }
  return run;
}

/** Why a version's profile ended before its slices were measured: its job's own end, or its mode's failure. */
function endedReason(mode: ModeResult | undefined, arm: Arm): string {
  return mode?.status === 'ok' ? AGAINST_TEXT.endedBeforeSlices(arm, mode.stopReason) : noPaceReason(mode, 'cached');
}

/**
 * One round: one version launched (launchOrder), the other once the first one's job runs (a profile registers itself
 * once its data is listed, and refuses another that started before it), then the slices; both ended whatever happens.
 * The outcomes come back by version: a version not launched (the round ended first) has none.
 */
async function launchPair(
  plan: AgainstPlan,
  index: number,
  pair: SlicedPair,
  io: Io,
  shown: Set<string>,
): Promise<Partial<Record<Arm, ProfileRunOutcome>>> {
  // A Ctrl-C resumes both jobs, so that the SIGTERM their profiles send reaches them.
  const removeSignal = io.onSignal(() => pair.release());
  const order = launchOrder(index);
  const outcomes: Partial<Record<Arm, Promise<ProfileRunOutcome>>> = {};
  try {
    for (const arm of order) {
      const outcome = launchArm(plan, { index, arm, first: arm === order[0] }, pair, io, shown);
      outcomes[arm] = outcome;
      void outcome.then(
        () => pair.ended(arm),
        () => pair.ended(arm),
      );
      await pair.untilStarted(arm);
      if (pair.over) break;
    }
    if (!pair.over) await runSlices(pair, sliceBudget(plan.iterations), order);
  } finally {
    pair.release();
    removeSignal();
  }
  // Both profiles end before a failure of either is thrown: no job outlives the round.
  const settled = await Promise.allSettled([outcomes.reference, outcomes.candidate]);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  const [reference, candidate] = settled.map((s) => (s as PromiseFulfilledResult<ProfileRunOutcome | undefined>).value);
  return { reference, candidate };
}

/** A version's launch in round `index`; `first`: launched before the other. */
interface ArmLaunch {
  index: number;
  arm: Arm;
  first: boolean;
}

/** One version's profile in the cached mode, its job handed to the pair as it starts. */
function launchArm(
  plan: AgainstPlan,
  { index, arm, first }: ArmLaunch,
  pair: SlicedPair,
  io: Io,
  shown: Set<string>,
): Promise<ProfileRunOutcome> {
  const out = join(plan.outDir, `round-${String(index).padStart(2, '0')}-${arm}.json`);
  // The first profile refuses another's; the second runs beside the first.
  const flags = { ...roundFlags(plan, out), allowConcurrent: first ? plan.raw.allowConcurrent : true };
  const input = {
    ...parseProfileOptions(plan.argv[arm], flags, io),
    // The gate ends the job once its slices are measured: no precision, budget or fewest iterations of the profile's own.
    precision: 0,
    minIterations: 1,
    maxIterations: UNREACHED_ITERATIONS,
    storageProbe: false,
    // One pause of the page-cache reclaimers for the pair: the first one's.
    ...(first ? {} : { pauseReclaim: false }),
  };
  return runProfile(input, {
    ...roundHooks(io, shown, index === 1 && first),
    onJobStarted: (job) => pair.started(arm, job),
    onProgress: (progress) => pair.progress(arm, progress.iterations, progress.medianIterMs),
  });
}

/** What each version runs in each phase of a sliced round: iterations (--max-iterations), or ms inside its slices. */
interface SliceBudget {
  unit: 'iterations' | 'ms';
  warmUp: number;
  measured: number;
}

function sliceBudget(iterations: number | null): SliceBudget {
  if (iterations !== null) return { unit: 'iterations', warmUp: iterations, measured: iterations };
  return { unit: 'ms', warmUp: DEFAULT_SLICED_SEC.warmUp * 1000, measured: DEFAULT_SLICED_SEC.measured * 1000 };
}

/**
 * The slices, A B B A ... (A: the round's first version): warm-up ones until each version has run its warm-up budget
 * inside them, then measured ones until each has run its measured budget and MIN_SLICE_PAIRS pairs have run, in whole
 * A B B A blocks. Each slice lasts about SLICE_ITERATIONS of the slower version's median iteration (sliceMs).
 */
async function runSlices(pair: SlicedPair, budget: SliceBudget, order: readonly Arm[]): Promise<void> {
  for (const measured of [false, true]) {
    const target = measured ? budget.measured : budget.warmUp;
    const counted: Record<Arm, number> = { reference: 0, candidate: 0 };
    for (let k = 0; ; k++) {
      const enough = ARMS.every((arm) => counted[arm] >= target);
      if (k % 4 === 0 && k >= (measured ? 2 * MIN_SLICE_PAIRS : 4) && enough) break;
      const arm = order[k % 4 === 0 || k % 4 === 3 ? 0 : 1];
      const before = pair.reported[arm];
      const slice = await pair.runSlice(arm, sliceMs(pair.slowerMedianMs()));
      if (slice === null) return;
      // The first iteration after a resume is left out of the pace (gate/slices.ts).
      counted[arm] += budget.unit === 'ms' ? slice.toMs - slice.fromMs : Math.max(0, pair.reported[arm] - before - 1);
      if (measured) pair.slices.push(slice);
    }
  }
}

/** The two jobs of a round as the slices drive them: each one's job and progress, and how the round ends. */
class SlicedPair {
  /** The measured slices, in run order. */
  readonly slices: Slice[] = [];
  /** Iterations each version has reported so far. */
  readonly reported: Record<Arm, number> = { reference: 0, candidate: 0 };
  /** The version whose profile ended before the slices were measured; null: none did. */
  endedEarly: Arm | null = null;
  private readonly jobs: Partial<Record<Arm, Job>> = {};
  private readonly medianMs: Record<Arm, number | null> = { reference: null, candidate: null };
  private readonly wakers = new Set<() => void>();
  private stopped: Arm | null = null;
  private done = false;

  /** True once the round is over: interrupted, a profile ended, or released. */
  get over(): boolean {
    return this.done;
  }

  started(arm: Arm, job: Job): void {
    this.jobs[arm] = job;
    if (this.done) void job.timeOut();
    this.wakeAll();
  }

  progress(arm: Arm, iterations: number, medianMs: number | null): void {
    this.reported[arm] = iterations;
    this.medianMs[arm] = medianMs;
  }

  /** Resolves once the arm's job runs, or the round is over. */
  async untilStarted(arm: Arm): Promise<void> {
    while (!this.jobs[arm] && !this.done) await this.nap(null);
  }

  slowerMedianMs(): number | null {
    const known = ARMS.map((arm) => this.medianMs[arm]).filter((ms): ms is number => ms !== null);
    return known.length > 0 ? Math.max(...known) : null;
  }

  /** Hands the machine to `arm` for `ms`: the other stopped, this one resumed; null once the round is over. */
  async runSlice(arm: Arm, ms: number): Promise<Slice | null> {
    const other: Arm = arm === 'reference' ? 'candidate' : 'reference';
    if (this.stopped !== other) {
      this.jobs[other]?.pass('SIGSTOP');
      this.jobs[arm]?.pass('SIGCONT');
      this.stopped = other;
    }
    const fromMs = Date.now();
    while (!this.done && Date.now() < fromMs + ms) await this.nap(fromMs + ms - Date.now());
    return this.done ? null : { arm, fromMs, toMs: Date.now() };
  }

  /** A profile has ended: before the slices were measured, the round gives no pace. */
  ended(arm: Arm): void {
    if (!this.done) this.endedEarly = arm;
    this.release();
  }

  /** Ends the round (its slices measured, a profile ended, a Ctrl-C): both jobs resumed, then ended as a timeout would. */
  release(): void {
    if (this.done) return;
    this.done = true;
    // Resumed first: a stopped job holds the SIGTERM until then; ended by timeOut, its profile keeps what it measured.
    for (const job of Object.values(this.jobs)) {
      job.pass('SIGCONT');
      void job.timeOut();
    }
    this.wakeAll();
  }

  /** Sleeps up to `ms` (null: until woken); a start or the round's end wakes it early. */
  private nap(ms: number | null): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        resolve();
      };
      const timer = ms === null ? undefined : setTimeout(wake, ms);
      this.wakers.add(wake);
    });
  }

  private wakeAll(): void {
    for (const wake of [...this.wakers]) wake();
  }
}

/** A mode's iterations of its pace rank, as the slices time them. */
function timed(mode: ModeResult | undefined): TimedIteration[] {
  const rank = mode?.ranks.find((r) => r.rank === mode.paceRank) ?? mode?.ranks[0];
  return (rank?.iterations ?? []).map((it) => {
    const { startMs, endMs } = iterationBounds(it);
    return { fromMs: startMs, toMs: endMs, samples: it.samples };
  });
}
