/** --in-flight: remote data's requests in flight per loader worker (Scenario.inFlightPerWorker): q in r L / (W q). */
import { parsePositiveInt } from '../../units.js';
import type { Knob } from './knob.js';

export const IN_FLIGHT_KNOB: Knob<number> = {
  name: 'in-flight',
  flag: {
    syntax: '--in-flight <n>',
    help: 'remote data: requests each loader worker keeps in flight (threads per worker; default: as profiled)',
  },
  field: 'inFlightPerWorker',
  parse: (text) => parsePositiveInt(text, '--in-flight'),
  fetchStage: { inFlightPerWorker: '--in-flight' },
  requestsOnly: true,
};
