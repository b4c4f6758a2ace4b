/**
 * Per-mode figures that several layers derive from a mode's raw ranks: bytes
 * per sample, whether the job reported its bytes, the whole job's rate, and
 * the prep CPU per sample two modes show between them.
 */
import type { ModeResult, RankResult } from '../schema/profile.js';

/** Mean bytes per consumed sample over the whole run of the mode (all ranks), or null without samples or bytes. */
export function bytesPerSample(m: ModeResult): number | null {
  let samples = 0;
  for (const r of m.ranks) for (const it of r.iterations) samples += it.samples;
  return samples > 0 && m.state.consumedBytes > 0 ? m.state.consumedBytes / samples : null;
}

/**
 * Whether every iteration carried the bytes behind its batch. Otherwise
 * consumed bytes are samples x the mean file size, which assumes one file
 * per sample (the PyTorch hook cannot know the bytes).
 */
export function reportsBytes(ranks: RankResult[]): boolean {
  return ranks.every((r) => r.iterations.every((it) => it.bytes !== undefined));
}

/**
 * Samples per second of the whole job in a mode: each rank's measured rate,
 * summed (data-parallel ranks share the storage, the CPUs and the pace); the
 * pace-setting rank's summary when no rank has its own. Null without a summary.
 */
export function allRanksSamplesPerSec(m: ModeResult): number | null {
  let samplesPerSec = 0;
  let ranked = false;
  for (const r of m.ranks) {
    if (r.summary === null) continue;
    samplesPerSec += r.summary.samplesPerSec;
    ranked = true;
  }
  if (ranked) return samplesPerSec;
  return m.summary ? m.summary.samplesPerSec : null;
}

/**
 * Pre-processing CPU per sample, u: the job's CPU-seconds per sample in the
 * cached mode less the synthetic mode's (same job, same step; only the
 * loader's work differs). Null when either mode lacks the figure. It can come
 * out at or below 0 (prep too cheap to see beside the step, or noise): each
 * caller says what that means for it.
 */
export function prepCpuSecPerSample(synthetic: ModeResult, cached: ModeResult): number | null {
  if (synthetic.jobCpuSecPerSample == null || cached.jobCpuSecPerSample == null) return null;
  return cached.jobCpuSecPerSample - synthetic.jobCpuSecPerSample;
}
