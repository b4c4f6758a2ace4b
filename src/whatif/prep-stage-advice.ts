/**
 * The what-if's advice on prep itself: where a prep stall is predicted at the profiled settings and the loader's
 * processes timed their stages (analysis/prep-stages.ts), the costliest stage, its share and what to do about it. More
 * CPUs or workers (recommend.ts) pay for prep; this makes it cheaper.
 */
import type { Profile } from '../schema/profile.js';
import type { PrepStageAdvice } from '../schema/whatif-output.js';
import { PREP_STAGE_TEXT } from './advice-text.js';
import { NEGLIGIBLE_FETCH_STALL, type Prediction } from './model.js';

/** The costliest stage's advice, or null without stages or without a prep stall worth removing. */
export function prepStageAdvice(
  profile: Pick<Profile, 'analysis'>,
  baseline: Pick<Prediction, 'prepStallMs' | 'computeMs'>,
): PrepStageAdvice | null {
  const stages = profile.analysis?.prepStages;
  const top = stages?.stages[0];
  if (!stages || !top) return null;
  if (baseline.prepStallMs <= baseline.computeMs * NEGLIGIBLE_FETCH_STALL) return null;
  return {
    kind: top.kind,
    name: top.name,
    share: top.share,
    cpuMsPerSample: top.cpuMsPerSample,
    lines: PREP_STAGE_TEXT.advice(top.name, top.kind, top.share, top.cpuMsPerSample),
  };
}
