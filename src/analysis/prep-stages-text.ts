// Words of the prep-stages block (analysis/prep-stages.ts), shown by the report and the what-if.
import type { PrepStages } from '../schema/profile.js';

const ms = (value: number) => `${value.toFixed(value < 0.1 ? 3 : 2)} ms`;
const pct = (share: number) => `${Math.round(share * 100)}%`;

export const PREP_STAGES_TEXT = {
  noCopy: 'no host-to-device copy: the host has no GPU, the batches stay in host memory',
  copyNotTimed:
    'host-to-device copy: not timed by stage (on CUDA it is asynchronous); it runs in the training step, in the ' +
    'synthetic mode too, so it is compute, not prep',
  /** The block's heading line. */
  heading: (s: PrepStages): string =>
    `prep stages (cached mode, ${Number.isInteger(s.samples) ? s.samples : `about ${Math.round(s.samples)}`} samples; ${ms(s.fetchCpuMsPerSample)} CPU/sample in the loader's processes):`,
  /** Where the loader's processes waited for a core, how the stages' CPU was estimated; null where they hardly did. */
  waited: (s: PrepStages): string | null =>
    s.fetchCpuShare < 0.9
      ? `the loader ran ${pct(s.fetchCpuShare)} of its time on a CPU (waiting for one): stage CPU = wall ` +
        `x ${s.fetchCpuShare.toFixed(2)}`
      : null,
  /** One stage's line. */
  stage: (name: string, kind: string, cpuMsPerSample: number, share: number): string =>
    `${name}${kind !== name && kind !== 'transform' ? ` (${kind})` : ''}: ${ms(cpuMsPerSample)} CPU/sample, ${pct(share)}`,
  unnamed: (cpuMsPerSample: number, share: number): string =>
    `in no named stage (the dataset's own code): ${ms(cpuMsPerSample)} CPU/sample, ${pct(share)}`,
  /** The check of the stages' sum against the measured prep CPU, and what lies outside the stages. */
  check: (s: PrepStages): string[] => {
    if (s.measuredPrepCpuMsPerSample === null || s.coverage === null) {
      return [
        `the stages add up to ${ms(s.stagesCpuMsPerSample)} CPU/sample; prep CPU per sample not measured (needs ` +
          `cached and synthetic): not checked`,
      ];
    }
    const verdict = s.withinTolerance ? `within ${pct(s.tolerance)} of it` : `NOT within ${pct(s.tolerance)} of it`;
    const lines = [
      `the stages add up to ${ms(s.stagesCpuMsPerSample)}, ${pct(s.coverage)} of ` +
        `the ${ms(s.measuredPrepCpuMsPerSample)} prep CPU measured per sample: ${verdict}`,
    ];
    if (s.coverage < 1) {
      lines.push(
        `the other ${ms(s.measuredPrepCpuMsPerSample - s.stagesCpuMsPerSample)}: moving batches between ` +
          `processes, pinning, the dataset's code, a step slowed by prep`,
      );
    }
    return lines;
  },
};
