/**
 * What the CPUs give the job, measured rather than read off a pace: the
 * training step's own CPU (all of one CPU or more when the "accelerator" is
 * the CPU, as in CPU training), and the CPUs other load kept busy on the
 * machine while the cached mode ran. The prep stage shares the CPUs with the
 * step (model.ts, stageTimes): a job whose step runs on the CPU does not hand
 * a whole CPU to its training process off the top, it shares them.
 */
import type { ModeResult, Profile } from '../../schema/profile.js';
import { parameter, type Fitted } from './fitted.js';
import { proven, type MeasuredModes } from './modes.js';

/** The step keeps at least this share of a CPU busy: its compute runs on the CPU. */
const CPU_STEP_SHARE = 0.5;

/** The CPUs as fitted. */
export interface CpuShareFit {
  /** CPU-seconds the training process takes per sample for the step alone (synthetic mode, loader not consulted); 0 when not reported. */
  stepCpuSecPerSample: number;
  /** CPUs the step keeps busy: its CPU per sample over its time per sample. */
  stepCpus: number;
  /** Whether the step's compute runs on the CPU (it keeps at least half a CPU busy). */
  computeOnCpu: boolean;
  /** CPUs busy outside the job during the cached mode (other processes, the profiler), mean; 0 when not sampled. */
  externalCpus: number;
  /**
   * The share of a CPU a process of the job can count on when prep never set
   * the pace: 1 less the other load's share of the profiled CPUs. The
   * pessimistic end of what a worker or a CPU gives where nothing measured it.
   */
  cpuShareLow: number;
}

/** The step's CPU, from the synthetic mode, and the other load, from the cached mode's samples. */
export function fitCpuShare(profile: Profile, modes: MeasuredModes, profiledCpus: number): Fitted<CpuShareFit> {
  const { synthetic, cached } = modes;
  const stepMs = paceRankOf(synthetic)?.mainCpuMsPerSample ?? null;
  const stepCpuSecPerSample = stepMs === null ? 0 : stepMs / 1000;
  const computeSecPerSample = synthetic.summary.iterMs.mean / 1000 / synthetic.summary.samplesPerIter;
  const stepCpus = stepCpuSecPerSample / computeSecPerSample;
  const computeOnCpu = stepCpus >= CPU_STEP_SHARE;
  const externalCpus = otherLoadCpus(cached, profile.host.cpus);
  const cpuShareLow = Math.max(0.05, Math.min(1, 1 - externalCpus / Math.max(1, profiledCpus)));
  const rows = [
    parameter(
      'k',
      'CPUs the training step keeps busy itself',
      stepCpus,
      'CPUs',
      stepMs === null ? 'not reported (processCpuMs): taken as 0' : 'synthetic mode ranks[].mainCpuMsPerSample / (T_gpu / b)',
      proven(synthetic),
      computeOnCpu ? 'the step runs on the CPU: it shares the CPUs with prep' : undefined,
    ),
    parameter('x_ext', 'CPUs busy outside the job (other load, the profiler)', externalCpus, 'CPUs', 'cached mode resources: machine cpuPct less the job tree CPU', true),
  ];
  return { kind: 'fitted', value: { stepCpuSecPerSample, stepCpus, computeOnCpu, externalCpus, cpuShareLow }, parameters: rows, caveats: [] };
}

function paceRankOf(result: ModeResult) {
  return result.ranks.find((r) => r.rank === result.paceRank) ?? result.ranks[0];
}

/** Mean CPUs busy on the machine that the job's tree did not use, over the mode's samples. */
function otherLoadCpus(result: ModeResult, hostCpus: number): number {
  const samples = result.resources;
  if (samples.length < 2) return 0;
  let busy = 0;
  for (let k = 1; k < samples.length; k++) busy += (samples[k].cpuPct / 100) * hostCpus * ((samples[k].t - samples[k - 1].t) / 1000);
  const seconds = (samples.at(-1)!.t - samples[0].t) / 1000;
  const job = samples.at(-1)!.jobCpuSec - samples[0].jobCpuSec;
  return seconds > 0 ? Math.max(0, (busy - job) / seconds) : 0;
}
