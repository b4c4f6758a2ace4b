/**
 * The report's what-if curves, drawn from the what-if core's own curves of the profile (whatif/curves.ts
 * `whatifCurves`, the route `whatif` sweeps through too): this file only labels them and marks what was measured. The
 * model is someone else's contract: a profile it cannot fit (a missing mode, no CPU figures) gives the reason instead
 * of curves.
 */
import type { Profile } from '../schema/profile.js';
import { allRanksSamplesPerSec } from '../analysis/mode-rates.js';
import { formatBytes, formatRate } from '../units.js';
import { whatifCurves } from '../whatif/curves.js';
import type { WhatIfCurvesOrReason, WhatIfSource } from './whatif-source.js';

/** What-if curves of a profile from the fitted model. */
export const modelWhatIf: WhatIfSource = (profile: Profile): WhatIfCurvesOrReason => {
  try {
    const swept = whatifCurves(profile);
    if (swept.kind === 'not-enough-data') return notAvailable(swept.reason);
    const { model, scenario } = swept;
    const { cacheSweep: cache, cpuSweep: cpus, workersSweep: workers } = swept.curves;
    const finite = (v: number) => Number.isFinite(v);
    const cacheMarks: { label: string; x: number; samplesPerSec: number }[] = [];
    // The curves are for all ranks together, so are the marks.
    const cold = profile.modes.cold && allRanksSamplesPerSec(profile.modes.cold);
    const cached = profile.modes.cached && allRanksSamplesPerSec(profile.modes.cached);
    if (cold) cacheMarks.push({ label: 'measured: cold (no cache)', x: 0, samplesPerSec: cold });
    if (cached)
      cacheMarks.push({ label: 'measured: cached (whole dataset)', x: model.datasetBytes, samplesPerSec: cached });
    const here = cpus.find((row) => row.cpus === scenario.cpus);
    // Measured in the cached mode, as the curve predicts it (the whole dataset cached): the script's count, then the
    // sweep's.
    const workersMarks: { label: string; x: number; samplesPerSec: number }[] = [];
    if (cached && model.profiledWorkers !== null)
      workersMarks.push({
        label: `measured: cached mode (${model.profiledWorkers}, the script's)`,
        x: model.profiledWorkers,
        samplesPerSec: cached,
      });
    for (const point of profile.workersSweep ?? []) {
      const rate = point.summary ? allRanksSamplesPerSec(point) : null;
      if (rate && point.workersAsked !== undefined)
        workersMarks.push({
          label: `measured: profile --workers ${point.workersAsked}`,
          x: point.workersAsked,
          samplesPerSec: rate,
        });
    }
    return {
      available: true,
      curves: {
        cache: [
          {
            policy: 'page-cache',
            label: 'OS page cache (reshuffled each epoch)',
            points: cache
              .filter((r) => finite(r.pageCacheSamplesPerSec))
              .map((r) => ({ x: r.cacheBytes, samplesPerSec: r.pageCacheSamplesPerSec })),
          },
          {
            policy: 'minio',
            label: 'application cache that never evicts (MinIO)',
            points: cache
              .filter((r) => finite(r.minioSamplesPerSec))
              .map((r) => ({ x: r.cacheBytes, samplesPerSec: r.minioSamplesPerSec })),
          },
        ],
        cpus: cpus.filter((r) => finite(r.samplesPerSec)).map((r) => ({ x: r.cpus, samplesPerSec: r.samplesPerSec })),
        cacheMarks: cacheMarks.filter((m) => finite(m.samplesPerSec) && finite(m.x)),
        cpuMarks:
          here && finite(here.samplesPerSec)
            ? [{ label: `this machine (${scenario.cpus} CPUs)`, x: scenario.cpus, samplesPerSec: here.samplesPerSec }]
            : [],
        workers: workers
          .filter((r) => finite(r.samplesPerSec))
          .map((r) => ({ x: r.workers, samplesPerSec: r.samplesPerSec })),
        workersMarks: workersMarks.filter((m) => finite(m.samplesPerSec)),
        cpuScenario:
          `cache ${formatBytes(scenario.cacheBytes)} (page cache), ` +
          `storage ${formatRate(scenario.storageBytesPerSec)}`,
        notes: [
          model.cpuScaling.kind === 'linear'
            ? 'CPU scaling assumed linear: no CPU sweep was run (profile with a CPU sweep to fit it).'
            : `CPU scaling fitted from ${model.cpuScaling.source}.`,
          ...model.caveats,
        ],
      },
    };
  } catch (error) {
    return notAvailable(error instanceof Error ? error.message : String(error));
  }
};

function notAvailable(why: string): WhatIfCurvesOrReason {
  return { available: false, reason: `what-if curves not available for this profile: ${why}` };
}
