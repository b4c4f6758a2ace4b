import { readTextOrNull } from './read-text.js';

/** Where the kernel says whether the multi-generational LRU runs (admin-guide/mm/multigen_lru.rst). */
const LRU_GEN_PATH = '/sys/kernel/mm/lru_gen/enabled';

/**
 * Which reclaim runs the page cache: 'on' where the multi-generational LRU is
 * enabled (any bit of its mask set), 'off' where it is built in but off, and
 * 'absent' where the kernel has none: then the classic two lists run it.
 */
export function lruGenState(path = LRU_GEN_PATH): 'on' | 'off' | 'absent' {
  const text = readTextOrNull(path);
  if (text === null) return 'absent';
  const mask = Number.parseInt(text.trim(), 16);
  return Number.isFinite(mask) && mask !== 0 ? 'on' : 'off';
}
