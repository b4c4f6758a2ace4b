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
  const waited = PREP_STAGES_TEXT.waited(s);
  if (waited) out.push(`  ${waited}`);
  // A single stage past the limit is listed, not summed as "1 more".
  const listed = s.stages.length <= LISTED + 1 ? s.stages.length : LISTED;
  for (const stage of s.stages.slice(0, listed))
    out.push(`  ${PREP_STAGES_TEXT.stage(stage.name, stage.kind, stage.cpuMsPerSample, stage.share)}`);
  const rest = s.stages.slice(listed);
  if (rest.length > 0) {
    const restMs = rest.reduce((sum, r) => sum + r.msPerSample, 0);
    out.push(
      `  ${PREP_STAGES_TEXT.stage(`${rest.length} more stages`, 'transform', restMs * s.fetchCpuShare, restMs / s.fetchMsPerSample)}`,
    );
  }
  if (s.unnamedMsPerSample > 0)
    out.push(
      `  ${PREP_STAGES_TEXT.unnamed(s.unnamedMsPerSample * s.fetchCpuShare, s.unnamedMsPerSample / s.fetchMsPerSample)}`,
    );
  for (const line of PREP_STAGES_TEXT.check(s)) out.push(`  ${line}`);
  out.push(`  ${s.copy}`);
  return out;
}
