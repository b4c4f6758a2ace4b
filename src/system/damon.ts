import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where the kernel's DAMON sysfs interface lives (Documentation/admin-guide/mm/damon/usage.rst). */
export const DAMON_ADMIN = '/sys/kernel/mm/damon/admin';

/**
 * The running DAMON schemes that page out or reclaim memory on their own.
 * A `pageout` scheme evicts pages that were idle for a while, the page cache
 * included: a cached mode whose epochs are slower than that age loses the
 * dataset's pages during the run (seen here: a 192 s epoch of a GAN on CPU,
 * with pages idle 60 s paged out). Returns descriptions, empty when none runs
 * or DAMON is absent.
 */
export function reclaimingDamonSchemes(admin = DAMON_ADMIN): string[] {
  const kdamonds = join(admin, 'kdamonds');
  if (!existsSync(kdamonds)) return [];
  const found: string[] = [];
  for (const k of numbered(kdamonds)) {
    const dir = join(kdamonds, k);
    if (read(join(dir, 'state')) !== 'on') continue;
    for (const c of numbered(join(dir, 'contexts'))) {
      const context = join(dir, 'contexts', c);
      for (const s of numbered(join(context, 'schemes'))) {
        const action = read(join(context, 'schemes', s, 'action'));
        if (action === 'pageout' || action === 'lru_deprio') {
          found.push(`kdamond ${k}: ${action} on ${read(join(context, 'operations')) ?? 'unknown'} memory`);
        }
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
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return null;
  }
}
