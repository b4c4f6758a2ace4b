import type { Profile } from '../schema/profile.js';

/**
 * What the profile cost, in one line (docs/method.md, "One launch"): launches
 * of the job and why, wall time, the share of it spent measuring, and the
 * profiler's own CPU over the runs. Null for a profile that did not record it.
 */
export function costLine(profile: Profile): string | null {
  const cost = profile.cost;
  if (!cost) return null;
  const launches =
    cost.schedule === 'one-launch'
      ? `${cost.launches} launch${cost.launches === 1 ? '' : 'es'} of the job (the modes as blocks of one)`
      : `${cost.launches} launch${cost.launches === 1 ? '' : 'es'} of the job${cost.scheduleReason ? ` (a launch a run: ${cost.scheduleReason})` : ''}`;
  const profiler = profilerCpuShare(profile);
  return (
    `cost: ${launches}, ${cost.wallSec.toFixed(1)} s; ${cost.measuredIterations} iterations measured of ${cost.jobIterations} run, ` +
    `${(cost.measuredShare * 100).toFixed(0)}% of the time measuring` +
    (profiler === null ? '' : `; the profiler used ${(profiler * 100).toFixed(1)}% of one CPU while the job ran`)
  );
}

/** The profiler's CPU seconds over the modes' wall time (a pooled mode sums its runs' both); null without them. */
export function profilerCpuShare(profile: Profile): number | null {
  let cpuSec = 0;
  let wallSec = 0;
  for (const mode of Object.values(profile.modes)) {
    if (mode.profilerCpuSec === undefined) continue;
    cpuSec += mode.profilerCpuSec;
    wallSec += mode.wallSec;
  }
  return wallSec > 0 ? cpuSec / wallSec : null;
}
