/**
 * --prep-speedup: a cheaper pre-processing (Scenario.prepSpeedup), such as a faster decoder, a lighter transform or a
 * costly stage removed: Y in u / Y, the prep CPU per sample, everywhere u is read (the workers' cap, the CPUs' cap, and
 * the serial prep of num_workers=0).
 */
import { parsePositiveNumber } from '../../units.js';
import type { Knob } from './knob.js';

export const PREP_SPEEDUP_KNOB: Knob<number> = {
  name: 'prep-speedup',
  flag: {
    syntax: '--prep-speedup <y>',
    help:
      'pre-processing speed-up: the prep CPU per sample is divided by it, e.g. 2 for a decoder twice as fast ' +
      "(the profile's prep stages say where the CPU goes)",
    defaultValue: '1',
  },
  field: 'prepSpeedup',
  // The default, 1, is the profiled pre-processing: not a change.
  parse: (text) => (text === '1' ? undefined : parsePositiveNumber(text, '--prep-speedup')),
  asked: (scenario) => ((scenario.prepSpeedup ?? 1) === 1 ? null : `prep speed-up ${scenario.prepSpeedup}x`),
};
