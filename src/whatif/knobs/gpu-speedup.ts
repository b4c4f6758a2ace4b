/** --gpu-speedup: a faster accelerator, its compute time divided by the factor (Scenario.gpuSpeedup). */
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
