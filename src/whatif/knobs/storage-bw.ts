/** --storage-bw: the storage read bandwidth of the server (Scenario.storageBytesPerSec): B_storage in t_fetch. */
import { parseRate } from '../../units.js';
import type { Knob } from './knob.js';

export const STORAGE_BW_KNOB: Knob<number> = {
  name: 'storage-bw',
  flag: {
    syntax: '--storage-bw <rate>',
    help:
      'storage read bandwidth of the server (for remote data, the network), e.g. 200MB/s ' +
      '(default: measured in the cold mode)',
  },
  field: 'storageBytesPerSec',
  parse: (text) => parseRate(text, '--storage-bw'),
  fetchStage: { storageBytesPerSec: '--storage-bw' },
};
