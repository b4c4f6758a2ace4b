/** --epochs: the epochs of the job to average over (Scenario.epochs): the first at h = 0, the rest at h(M). */
import { parsePositiveInt } from '../../units.js';
import type { Knob } from './knob.js';

export const EPOCHS_KNOB: Knob<number> = {
  name: 'epochs',
  flag: {
    syntax: '--epochs <n>',
    help: 'average over this many epochs of the job, the first one cold (default: the steady state, epoch 2 on)',
  },
  field: 'epochs',
  parse: (text) => parsePositiveInt(text, '--epochs'),
  // The first epoch's misses are reads from storage.
  fetchStage: { epochs: '--epochs' },
};
