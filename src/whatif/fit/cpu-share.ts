/**
 * What the CPUs give the job, measured rather than read off a pace: the training step's own CPU (all of one CPU or more
 * when the "accelerator" is the CPU, as in CPU training), and the CPUs other load kept busy on the machine while the
 * cached mode ran. The prep stage shares the CPUs with the step (model.ts, stageTimes): a job whose step runs on the
 * CPU does not hand a whole CPU to its training process off the top, it shares them.
 */
import type { ModeResult, Profile } from '../../schema/profile.js';
import { parameter, type Fitted } from './fitted.js';
import { proven, type MeasuredModes } from './modes.js';

/** The step keeps at least this share of a CPU busy: its compute runs on the CPU. */
const CPU_STEP_SHARE = 0.5;

/** The CPUs as fitted. */
export interface CpuShareFit {
  /**
   * CPU-seconds the training process takes per sample for the step alone (synthetic mode, loader not consulted); 0 when
   * not reported.
   */
  stepCpuSecPerSample: number;
  /** CPUs the step keeps busy: its CPU per sample over its time per sample. */
  stepCpus: number;
  /** Whether the step's compute runs on the CPU (it keeps at least half a CPU busy). */
  computeOnCpu: boolean;
  /** CPUs busy outside the job during the cached mode (other processes, the profiler), mean; 0 when not sampled. */
  externalCpus: number;
  /**
   * The share of a CPU a process of the job can count on when prep never set the pace: 1 less the other load's share of
   * the profiled CPUs. The pessimistic end of what a worker or a CPU gives where nothing measured it.
   */
  cpuShareLow: number;
}

/** The step's CPU, from the synthetic mode, and the other load, from the cached mode's samples. */
export function fitCpuShare(profile: Profile, modes: MeasuredModes, profiledCpus: number): Fitted<CpuShareFit> {
  const { synthetic, cached } = modes;
  const step = stepCpuOf(synthetic);
  const stepMs = step.secPerSample === null ? null : step.secPerSample * 1000;
  const stepCpuSecPerSample = step.secPerSample ?? 0;
  const stepCpus = step.cpus;
  const computeOnCpu = stepCpus >= CPU_STEP_SHARE;
  const externalCpus = otherLoadCpus(cached, profile.host.cpus);
  const cpuShareLow = Math.max(0.05, Math.min(1, 1 - externalCpus / Math.max(1, profiledCpus)));
  const rows = [
    parameter(
      'k',
      'CPUs the training step keeps busy itself',
      stepCpus,
      'CPUs',
      stepMs === null
        ? 'not reported (processCpuMs): taken as 0'
        : 'synthetic mode ranks[].mainCpuMsPerSample / (T_gpu / b)',
      proven(synthetic),
      computeOnCpu ? 'the step runs on the CPU: it shares the CPUs with prep' : undefined,
    ),
    parameter(
      'x_ext',
      'CPUs busy outside the job (other load, the profiler)',
      externalCpus,
      'CPUs',
      'cached mode resources: machine cpuPct less the job tree CPU',
      true,
    ),
  ];
  return {
    kind: 'fitted',
    value: { stepCpuSecPerSample, stepCpus, computeOnCpu, externalCpus, cpuShareLow },
    parameters: rows,
    caveats: [],
  };
}

/**
 * The step's own CPU per sample (the synthetic mode's training process; null when not reported) and the CPUs it keeps
 * busy (0 then).
 */
export function stepCpuOf(synthetic: ModeResult): { secPerSample: number | null; cpus: number } {
  const pace = synthetic.ranks.find((r) => r.rank === synthetic.paceRank) ?? synthetic.ranks[0];
  const ms = pace?.mainCpuMsPerSample ?? null;
  if (ms === null || !synthetic.summary) return { secPerSample: null, cpus: 0 };
  return { secPerSample: ms / 1000, cpus: ms / (synthetic.summary.iterMs.mean / synthetic.summary.samplesPerIter) };
}

/** Longest gap between two samples of one run, ms: a longer one joins two runs of a pooled mode. */
const MAX_SAMPLE_GAP_MS = 5000;

/**
 * Mean CPUs busy on the machine that the job's tree did not use, over the mode's samples. A pooled mode's samples hold
 * its runs one after another, each job tree's CPU counting from 0: intervals across a run boundary (the job's CPU going
 * back, or a long gap) are left out.
 */
function otherLoadCpus(result: ModeResult, hostCpus: number): number {
  const samples = result.resources;
  let other = 0;
  let seconds = 0;
  for (let k = 1; k < samples.length; k++) {
    const dtMs = samples[k].t - samples[k - 1].t;
    const jobSec = samples[k].jobCpuSec - samples[k - 1].jobCpuSec;
    if (dtMs <= 0 || dtMs > MAX_SAMPLE_GAP_MS || jobSec < 0) continue;
    other += (samples[k].cpuPct / 100) * hostCpus * (dtMs / 1000) - jobSec;
    seconds += dtMs / 1000;
  }
  return seconds > 0 ? Math.max(0, other / seconds) : 0;
}
