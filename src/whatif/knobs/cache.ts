/**
 * --cache: the cache available to the dataset (Scenario.cacheBytes): M in the hit ratio h(M) of the fetch row, t_fetch
 * = N · (1 − h(M)) · a · s / B_storage (docs/whatif.md).
 */
import { parseCacheSize, resolveCacheSize, type CacheSize } from '../../units.js';
import type { Knob } from './knob.js';

export const CACHE_KNOB: Knob<CacheSize> = {
  name: 'cache',
  flag: {
    syntax: '--cache <size>',
    help:
      'cache available to the dataset: bytes (64G, 512MiB, 1.5TB), a share of the dataset (50%), or 0 for none ' +
      '(default: the page cache the profiled host could give)',
  },
  field: 'cacheBytes',
  parse: (text) => parseCacheSize(text, '--cache'),
  // A share (50%) needs the dataset's size, which only the profile knows.
  resolve: (query, size, profile) => {
    query.cacheBytes = resolveCacheSize(size, profile.dataset.bytes);
  },
  fetchStage: { cacheBytes: '--cache' },
  // validate's cache points run any size.
  validateFlag: (_model, scenario) => `--cache ${Math.round(scenario.cacheBytes)}`,
};
