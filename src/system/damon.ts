import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readTextOrNull } from './read-text.js';

/** Where the kernel's DAMON sysfs interface lives (Documentation/admin-guide/mm/damon/usage.rst). */
export const DAMON_ADMIN = '/sys/kernel/mm/damon/admin';
/** The DAMON_RECLAIM module's switch (Documentation/admin-guide/mm/damon/reclaim.rst). */
export const DAMON_RECLAIM_ENABLED = '/sys/module/damon_reclaim/parameters/enabled';

/**
 * The running DAMON schemes that page out or reclaim memory on their own.
 * A `pageout` scheme evicts pages that were idle for a while, the page cache
 * included: a cached mode whose epochs are slower than that age loses the
 * dataset's pages during the run (seen here: a 192 s epoch of a GAN on CPU,
 * with pages idle 60 s paged out). Returns descriptions, empty when none runs
 * or DAMON is absent.
 */
export function reclaimingDamonSchemes(admin = DAMON_ADMIN, reclaimModule = DAMON_RECLAIM_ENABLED): string[] {
  const found: string[] = [];
  // DAMON_RECLAIM (mm/damon/reclaim.c) runs its own physical-memory pageout, not listed under admin/.
  if (read(reclaimModule) === 'Y') found.push('DAMON_RECLAIM: pageout on paddr memory');
  const kdamonds = join(admin, 'kdamonds');
  for (const k of numbered(kdamonds)) {
    const dir = join(kdamonds, k);
    if (read(join(dir, 'state')) !== 'on') continue;
    for (const c of numbered(join(dir, 'contexts'))) {
      const context = join(dir, 'contexts', c);
      // Only physical-address pageout reaches the page cache of any file; vaddr
      // schemes touch chosen processes, lru_deprio only reorders the LRU.
      if (read(join(context, 'operations')) !== 'paddr') continue;
      for (const s of numbered(join(context, 'schemes'))) {
        if (read(join(context, 'schemes', s, 'action')) === 'pageout') found.push(`kdamond ${k}: pageout on paddr memory`);
      }
    }
  }
  return found;
}

function numbered(dir: string): string[] {
  try {
    return readdirSync(dir).filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
}

function read(file: string): string | null {
  return readTextOrNull(file)?.trim() ?? null;
}
