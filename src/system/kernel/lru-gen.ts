import { readTextOrNull } from './read-text.js';

/** Where the kernel says whether the multi-generational LRU runs (admin-guide/mm/multigen_lru.rst). */
const LRU_GEN_PATH = '/sys/kernel/mm/lru_gen/enabled';

/** Which reclaim runs the page cache: the multi-generational LRU 'on' or 'off', or 'absent' (the classic two lists). */
export function lruGenState(path = LRU_GEN_PATH): 'on' | 'off' | 'absent' {
  const text = readTextOrNull(path);
  if (text === null) return 'absent';
  const mask = Number.parseInt(text.trim(), 16);
  return Number.isFinite(mask) && mask !== 0 ? 'on' : 'off';
}
