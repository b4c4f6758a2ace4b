/**
 * Per-mode figures that several layers derive from a mode's raw ranks: bytes per sample, whether the job reported its
 * bytes, the whole job's rate, and the prep CPU per sample two modes show between them.
 */
import type { ModeResult, RankResult } from '../schema/profile.js';

/**
 * Mean bytes per consumed sample (all ranks), or null without samples or bytes. consumedBytes covers the measured
 * window, so the samples must be that window's too: counting the warm-up's as well made a pooled PyTorch profile's s
 * 30% small (55 against 77 KiB files). Older profiles without consumedSamples count the iterations after each rank's
 * warm-up.
 */
export function bytesPerSample(m: ModeResult): number | null {
  const samples = m.state.consumedSamples ?? m.ranks.reduce((sum, r) => sum + measuredSamples(r), 0);
  return samples > 0 && m.state.consumedBytes > 0 ? m.state.consumedBytes / samples : null;
}

/**
 * Samples of a rank's iterations after warm-up: those not flagged, or, where none is flagged (older profiles), after
 * the first summary.warmupIterations.
 */
function measuredSamples(rank: RankResult): number {
  const flagged = rank.iterations.some((it) => it.warmup);
  const skip = flagged ? 0 : (rank.summary?.warmupIterations ?? 0);
  return rank.iterations.slice(skip).reduce((sum, it) => sum + (it.warmup ? 0 : it.samples), 0);
}

/**
 * Whether every iteration carried the bytes behind its batch. Otherwise consumed bytes are samples x the mean file
 * size, which assumes one file per sample (the PyTorch hook cannot know the bytes).
 */
export function reportsBytes(ranks: RankResult[]): boolean {
  return ranks.every((r) => r.iterations.every((it) => it.bytes !== undefined));
}

/**
 * Samples per second of the whole job in a mode: each rank's measured rate, summed (data-parallel ranks share the
 * storage, the CPUs and the pace); the pace-setting rank's summary when no rank has its own. Null without a summary.
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
 * Pre-processing CPU per sample, u: the job's CPU-seconds per sample in the cached mode less the synthetic mode's (same
 * job, same step; only the loader's work differs). Null when either mode lacks the figure. It can come out at or below
 * 0 (prep too cheap to see beside the step, or noise): each caller says what that means for it.
 */
export function prepCpuSecPerSample(synthetic: ModeResult, cached: ModeResult): number | null {
  if (synthetic.jobCpuSecPerSample == null || cached.jobCpuSecPerSample == null) return null;
  return cached.jobCpuSecPerSample - synthetic.jobCpuSecPerSample;
}
