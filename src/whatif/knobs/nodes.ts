/** --nodes: servers of the job, each as the scenario describes (Scenario.nodes), each on its share of an epoch. */
import { parsePositiveInt } from '../../units.js';
import type { Knob } from './knob.js';

export const NODES_KNOB: Knob<number> = {
  name: 'nodes',
  flag: {
    syntax: '--nodes <n>',
    help: 'servers of the job, each as the other flags describe (its CPUs, --cache, storage, --gpus)',
  },
  field: 'nodes',
  parse: (text) => parsePositiveInt(text, '--nodes'),
};
