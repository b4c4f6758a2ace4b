/**
 * The accelerator's stage: compute per iteration (T_gpu) and samples per iteration (b) from the synthetic mode, where
 * the loader is not consulted, and the ranks (accelerators) the profiled job ran.
 */
import { notEnoughData, parameter, type Fitted, type NotEnoughData } from './fitted.js';
import { proven, type MeasuredModes } from './modes.js';

/** The accelerator as profiled. */
export interface AcceleratorFit {
  /** Accelerator compute per iteration, s (synthetic mode). */
  computeSecPerIter: number;
  /** Samples per iteration per rank, b. */
  samplesPerIter: number;
  /** Ranks (accelerators) the profiled job ran, R. */
  profiledRanks: number;
}

/** T_gpu, b and R; not enough data when the synthetic mode measured no time or no samples. */
export function fitAccelerator(modes: MeasuredModes): Fitted<AcceleratorFit> | NotEnoughData {
  const { synthetic, cached, cold } = modes;
  const samplesPerIter = synthetic.summary.samplesPerIter;
  const computeSecPerIter = synthetic.summary.iterMs.mean / 1000;
  if (!(samplesPerIter > 0) || !(computeSecPerIter > 0))
    return notEnoughData('modes.synthetic.summary.iterMs', 'synthetic');
  const profiledRanks = Math.max(1, cached.ranks.length, cold?.ranks.length ?? 0);
  return {
    kind: 'fitted',
    value: { computeSecPerIter, samplesPerIter, profiledRanks },
    parameters: [
      parameter(
        'T_gpu',
        'accelerator compute per iteration',
        computeSecPerIter * 1000,
        'ms',
        'synthetic mode summary.iterMs',
        proven(synthetic),
      ),
      parameter(
        'b',
        'samples per iteration per rank',
        samplesPerIter,
        'samples',
        'synthetic mode summary.samplesPerIter',
        proven(synthetic),
      ),
      parameter('R', 'ranks in the profiled job', profiledRanks, 'ranks', 'ranks of the cached and cold modes', true),
    ],
    caveats: [],
  };
}
