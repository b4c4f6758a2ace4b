// What a profile run measured, looked at whole: every run of the job (the pooled modes, the CPU sweep, the overlap
// probe) and whether any of them saw an iteration; how a profile its data's endpoint stopped ends. Pure; the renderers
// decide from it what there is to show.
import { ExitCode } from '../errors.js';
import type { ModeResult, Profile } from '../schema/profile.js';
import { isAbort } from '../system/network/deadlines.js';
import { EndpointError } from '../system/network/remote-objects.js';
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

/**
 * How a profile ends that its data's endpoint stopped (it failed, or stopped answering: a download or the probe), or
 * the user's interrupt during a download; null for any other error, which goes on up.
 */
export function stoppedBy(
  error: unknown,
  interrupted: boolean,
): Pick<ProfileRunOutcome, 'exitCode' | 'stopped'> | null {
  if (interrupted && isAbort(error)) return { exitCode: ExitCode.Interrupted };
  if (error instanceof EndpointError) return { exitCode: error.exitCode, stopped: error.message };
  return null;
}

/** The data's rate over the network in the cold mode, bytes/s (a download's estimate), or null before it ran. */
export function networkRate(profile: Profile): number | null {
  const cold = profile.modes.cold;
  const bytes = cold?.network?.originBytes ?? 0;
  return cold && bytes > 0 && cold.wallSec > 0 ? bytes / cold.wallSec : null;
}
