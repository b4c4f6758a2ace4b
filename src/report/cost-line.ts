import type { Profile } from '../schema/profile.js';

/**
 * What the profile cost, in one line (docs/method.md, "One launch"): launches of the job and why, wall time, the share
 * of it spent measuring, and the profiler's own CPU over the runs. Null for a profile that did not record it.
 */
export function costLine(profile: Profile): string | null {
  const cost = profile.cost;
  if (!cost) return null;
  const launches =
    cost.schedule === 'one-launch'
      ? `${cost.launches} launch${cost.launches === 1 ? '' : 'es'} of the job (the modes as blocks of one)`
      : `${cost.launches} launch${cost.launches === 1 ? '' : 'es'} of the job${cost.scheduleReason ? ` (a launch a run: ${cost.scheduleReason})` : ''}`;
  const profiler = profilerCpuShare(profile);
  const parts = profilerCpuParts(profile);
  return (
    `cost: ${launches}, ${cost.wallSec.toFixed(1)} s; ${cost.measuredIterations} iterations measured ` +
    `of ${cost.jobIterations} run, ` +
    `${(cost.measuredShare * 100).toFixed(0)}% of the time measuring` +
    (profiler === null
      ? ''
      : `; the profiler used ${(profiler * 100).toFixed(1)}% of one CPU while the job ran${parts}`) +
    (cost.continued ? `\n${continuedLine(cost.continued)}` : '')
  );
}

/** profile --continue: the blocks' share of the real run they rode, and the time they added to it at most. */
export function continuedLine(c: NonNullable<NonNullable<Profile['cost']>['continued']>): string {
  const run = c.runSec !== undefined ? ` of the run's ${c.runSec.toFixed(1)} s` : ' (the run trains on)';
  const refused = c.refusedBlocks.length > 0 ? `; left out: ${c.refusedBlocks.map((b) => b.label).join(', ')}` : '';
  return (
    `rode the real run (--continue): the blocks took ${c.blocksSec.toFixed(1)} s${run}, adding at most ` +
    `${c.extraSec.toFixed(1)} s (synthetic blocks ${c.syntheticSec.toFixed(1)} s, snapshots ` +
    `${c.snapshotSec.toFixed(2)} s of ${(c.snapshotBytes / 2 ** 20).toFixed(1)} MiB, setting states ` +
    `${c.preparationSec.toFixed(1)} s, cold blocks over the cached pace ${c.coldExtraSec.toFixed(1)} s)${refused}`
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

/**
 * The ledger's components as shares of one CPU over the modes' wall time, largest first: ' (sampler 0.3%, ...)'; ''
 * without them.
 */
function profilerCpuParts(profile: Profile): string {
  const total: Record<string, number> = {};
  let wallSec = 0;
  for (const mode of Object.values(profile.modes)) {
    if (!mode.profilerCpu) continue;
    wallSec += mode.wallSec;
    for (const [component, sec] of Object.entries(mode.profilerCpu)) total[component] = (total[component] ?? 0) + sec;
  }
  const parts = Object.entries(total).sort((a, b) => b[1] - a[1]);
  if (wallSec <= 0 || parts.length === 0) return '';
  return ` (${parts.map(([component, sec]) => `${component} ${((sec / wallSec) * 100).toFixed(2)}%`).join(', ')})`;
}
