/**
 * --jobs: concurrent jobs on the server reading the same dataset (Scenario.jobs): K times the steps, and K times the
 * prep and the reads unless coordinated.
 */
import { parsePositiveInt } from '../../units.js';
import type { Knob } from './knob.js';

export const JOBS_KNOB: Knob<number> = {
  name: 'jobs',
  flag: {
    syntax: '--jobs <n>',
    help:
      'concurrent jobs on the server reading the same dataset (a hyper-parameter search), each with --gpus ranks: ' +
      'predicts them independent against coordinated (CoorDL: one fetch and prep of each sample for all)',
  },
  field: 'jobs',
  parse: (text) => parsePositiveInt(text, '--jobs'),
};
