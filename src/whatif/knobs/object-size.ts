/**
 * --object-size: remote data's bytes of one object, fetched by one request (Scenario.objectBytes): the requests a
 * sample needs, r = s / object bytes, in r L / (W q).
 */
import { parseSize } from '../../units.js';
import type { Knob } from './knob.js';

export const OBJECT_SIZE_KNOB: Knob<number> = {
  name: 'object-size',
  flag: {
    syntax: '--object-size <size>',
    help:
      'remote data: bytes of one object, fetched by one request: samples packed in shards of this size, e.g. 64MB ' +
      '(default: as profiled)',
  },
  field: 'objectBytes',
  parse: (text) => parseSize(text, '--object-size'),
  fetchStage: { objectBytes: '--object-size' },
  requestsOnly: true,
};
