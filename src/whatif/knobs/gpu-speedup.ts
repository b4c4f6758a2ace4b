/**
 * --gpu-speedup: a faster accelerator (Scenario.gpuSpeedup): X in t_gpu = T_synthetic / (b · X), and in a CPU-trained
 * step's share of the CPUs, k_s / X.
 */
import { parsePositiveNumber } from '../../units.js';
import type { Knob } from './knob.js';

export const GPU_SPEEDUP_KNOB: Knob<number> = {
  name: 'gpu-speedup',
  flag: {
    syntax: '--gpu-speedup <x>',
    help: 'accelerator speed-up: compute time is divided by it, e.g. 2 for a twice-as-fast GPU',
    defaultValue: '1',
  },
  field: 'gpuSpeedup',
  // The default, 1, is the profiled accelerator: not a change.
  parse: (text) => (text === '1' ? undefined : parsePositiveNumber(text, '--gpu-speedup')),
};
