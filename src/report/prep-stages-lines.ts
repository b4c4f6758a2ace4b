// The summary's "prep stages" block: each stage of a sample's preparation, per sample, costliest first.
import { PREP_STAGES_TEXT } from '../analysis/prep-stages-text.js';
import type { Profile } from '../schema/profile.js';

/** At most this many stages are listed by name; the rest are summed on one line. */
const LISTED = 6;

/** The block's lines, or none when no loader process reported its stages. */
export function prepStagesLines(profile: Pick<Profile, 'analysis'>): string[] {
  const s = profile.analysis?.prepStages;
  if (!s) return [];
  const out = [PREP_STAGES_TEXT.heading(s)];
  for (const stage of s.stages.slice(0, LISTED)) out.push(`  ${PREP_STAGES_TEXT.stage(stage.name, stage.kind, stage.cpuMsPerSample, stage.share)}`);
  const rest = s.stages.slice(LISTED);
  if (rest.length > 0) {
    const restMs = rest.reduce((sum, r) => sum + r.msPerSample, 0);
    out.push(`  ${PREP_STAGES_TEXT.stage(`${rest.length} more stages`, 'transform', restMs * s.fetchCpuShare, restMs / s.fetchMsPerSample)}`);
  }
  if (s.unnamedMsPerSample > 0) out.push(`  ${PREP_STAGES_TEXT.unnamed(s.unnamedMsPerSample * s.fetchCpuShare, s.unnamedMsPerSample / s.fetchMsPerSample)}`);
  out.push(`  ${PREP_STAGES_TEXT.check(s)}`);
  out.push(`  ${s.copy}`);
  return out;
}
