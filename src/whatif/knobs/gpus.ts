/** --gpus: data-parallel accelerators per server (Scenario.gpus): N, sharing CPUs, cache and storage in every row. */
import { parsePositiveInt } from '../../units.js';
import type { Knob } from './knob.js';

export const GPUS_KNOB: Knob<number> = {
  name: 'gpus',
  flag: {
    syntax: '--gpus <n>',
    help: 'data-parallel accelerators per server, sharing CPUs, cache and storage (default: as profiled)',
  },
  field: 'gpus',
  parse: (text) => parsePositiveInt(text, '--gpus'),
};
