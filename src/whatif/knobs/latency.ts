/** --latency: remote data's time from a request to its first byte (Scenario.requestLatencySec): L in r L / (W q). */
import { parseLatencySec } from '../../units.js';
import type { Knob } from './knob.js';

export const LATENCY_KNOB: Knob<number> = {
  name: 'latency',
  flag: {
    syntax: '--latency <ms>',
    help:
      'remote data: time from a request to its first byte, e.g. 40ms for a store farther away ' +
      '(default: as measured in the cold mode)',
  },
  field: 'requestLatencySec',
  parse: (text) => parseLatencySec(text, '--latency'),
  fetchStage: { requestLatencySec: '--latency' },
  requestsOnly: true,
};
