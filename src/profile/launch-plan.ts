// How many launches a profile costs: the modes as blocks of one launch where the job can switch modes and the source
// set its states under a running job, else one a run; and what it cost (docs/method.md, "One launch").
import type { Mode } from '../schema/events.js';
import type { ModeResult, Profile } from '../schema/profile.js';
import type { Dataset } from '../system/dataset/dataset.js';
import type { DataSource } from './data-sources/data-source.js';
import type { OneLaunching } from './data-sources/one-launch.js';
import { PROFILE_RUN_TEXT } from './run-text.js';

/** What fixes a profile's schedule (ProfileRunInput's fields). */
export interface ScheduleInput {
  modes: Mode[];
  cpuSweep?: number[];
  workersSweep?: number[];
  /** profile --separate-launches. */
  separateLaunches?: boolean;
  /** True when a test fakes single runs (a modeRunner without a launchRunner): it keeps the schedule it fakes. */
  fakesSingleRuns?: boolean;
  dataSource: Partial<OneLaunching> & Pick<DataSource, 'whyNot'>;
}

/** The schedule of a profile's runs. */
export interface LaunchPlan {
  /** 'one-launch': the modes are blocks of one launch; 'separate-launches': one launch a run. */
  schedule: 'one-launch' | 'separate-launches';
  /** Why the modes get a launch each, or null in one launch. */
  reason: string | null;
  /** The blocks of the one launch, in order; empty for separate launches. */
  blocks: PlannedRun[];
  /** The runs launched one by one: every run for separate launches, the CPU sweep after one launch. */
  runs: PlannedRun[];
}

/** Why the modes cannot share one launch, or null (several nodes can: their ranks agree through DSA_NODES). */
export function oneLaunchObstacle(input: ScheduleInput, dataset: Dataset): string | null {
  if (input.separateLaunches || input.fakesSingleRuns) return PROFILE_RUN_TEXT.separateAsked;
  if ((input.workersSweep ?? []).length > 0) return PROFILE_RUN_TEXT.separateWorkersSweep;
  const { oneLaunch, whyNot } = input.dataSource;
  return oneLaunch ? oneLaunch.obstacle(dataset, input.modes) : (whyNot?.oneLaunch ?? PROFILE_RUN_TEXT.separateSource);
}

/** planRuns's mirrored order (S C K K C S) as blocks of one launch where nothing prevents it, else one a run. */
export function launchPlan(input: ScheduleInput, dataset: Dataset, passes: number): LaunchPlan {
  const runs = planRuns(input, passes);
  const reason = oneLaunchObstacle(input, dataset);
  const modeRuns = runs.filter((run) => run.cpuCount === null && run.workers === null);
  if (reason !== null || modeRuns.length < 2)
    return { schedule: 'separate-launches', reason: modeRuns.length < 2 ? null : reason, blocks: [], runs };
  return { schedule: 'one-launch', reason: null, blocks: modeRuns, runs: runs.filter((run) => run.cpuCount !== null) };
}

/** How the schedule ran: the plan's, or separate launches where the job did not offer to switch. */
export interface ScheduleRan {
  schedule: LaunchPlan['schedule'];
  reason: string | null;
  launches: number;
  /** Iterations the job ran over all its launches (the most of any rank in each), measured or not. */
  jobIterations: number;
}

/** What the profile cost the user: launches, wall time, and how much of it measured. */
export function profileCost(
  results: readonly ModeResult[],
  ran: ScheduleRan,
  wallSec: number,
): NonNullable<Profile['cost']> {
  let measuredSec = 0;
  let measuredIterations = 0;
  for (const result of results) {
    const pace = result.ranks.find((r) => r.rank === result.paceRank);
    for (const it of pace?.iterations ?? []) {
      if (it.warmup) continue;
      measuredSec += (it.waitMs + it.computeMs) / 1000;
      measuredIterations++;
    }
  }
  return {
    schedule: ran.schedule,
    ...(ran.reason !== null ? { scheduleReason: ran.reason } : {}),
    launches: ran.launches,
    wallSec,
    jobIterations: ran.jobIterations,
    measuredIterations,
    measuredSec,
    measuredShare: wallSec > 0 ? Math.min(1, measuredSec / wallSec) : 0,
  };
}

/** One run: a mode, at all CPUs or a few (CPU sweep), with the script's workers or others (workers sweep). */
export interface PlannedRun {
  mode: Mode;
  /** CPUs to restrict the job to, or null for all. */
  cpuCount: number | null;
  /** Loader workers to ask the job for (DSA_NUM_WORKERS), or null for the script's own. */
  workers: number | null;
  /** Name of the run's folder and progress lines. */
  label: string;
  /** Share of the mode's iteration budget this run gets (1 / passes). */
  budgetShare: number;
}

/**
 * The modes `passes` times, every other pass reversed so a steady drift cancels from each mode's mean; the workers
 * sweep right after the cached mode (mirrored too), the CPU sweep last.
 */
export function planRuns(
  input: Pick<ScheduleInput, 'modes' | 'cpuSweep' | 'workersSweep'>,
  passes: number,
): PlannedRun[] {
  type Step = { mode: Mode; workers: number | null };
  const steps: Step[] = input.modes.map((mode) => ({ mode, workers: null }));
  const sweep: Step[] = (input.workersSweep ?? []).map((workers) => ({ mode: 'cached', workers }));
  const at = input.modes.indexOf('cached');
  steps.splice(at === -1 ? steps.length : at + 1, 0, ...sweep);
  const runs: PlannedRun[] = [];
  for (let pass = 1; pass <= passes; pass++) {
    for (const { mode, workers } of pass % 2 === 1 ? steps : [...steps].reverse()) {
      const base = workers === null ? mode : `${mode}-${workers}workers`;
      runs.push({
        mode,
        cpuCount: null,
        workers,
        label: pass === 1 ? base : `${base}-${pass}`,
        budgetShare: 1 / passes,
      });
    }
  }
  for (const count of input.cpuSweep ?? [])
    runs.push({ mode: 'cached', cpuCount: count, workers: null, label: `cached-${count}cpu`, budgetShare: 1 });
  return runs;
}

/** Iterations the job ran in one run: the most any of its ranks reported, measured or not. */
export function iterationsRun(result: Pick<ModeResult, 'ranks'>): number {
  return Math.max(0, ...result.ranks.map((r) => r.iterations.length));
}
