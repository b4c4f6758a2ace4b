// What a profile run measured, looked at whole: every run of the job (the
// pooled modes, the CPU sweep, the overlap probe) and whether any of them saw
// an iteration. Pure; the renderers decide from it what there is to show.
import { ExitCode } from '../errors.js';
import type { ModeResult } from '../schema/profile.js';
import type { ProfileRunOutcome } from './run-profile.js';

/** Every run of the profile: the (pooled) modes, the CPU sweep, the overlap probe. */
export function allRuns(profile: ProfileRunOutcome['profile']): ModeResult[] {
  return [
    ...Object.values(profile.modes),
    ...(profile.cpuSweep ?? []),
    ...(profile.overlapProbe ? [profile.overlapProbe] : []),
  ];
}

/** Iterations the job reported over all its ranks in one run. */
export function iterationsSeen(run: ModeResult): number {
  return run.ranks.reduce((sum, r) => sum + r.iterations.length, 0);
}

/** The job failed and no run saw a single iteration: there is nothing measured to show. */
export function failedBeforeAnyIteration(outcome: Pick<ProfileRunOutcome, 'exitCode' | 'profile'>): boolean {
  return outcome.exitCode === ExitCode.JobFailed && allRuns(outcome.profile).every((run) => iterationsSeen(run) === 0);
}
