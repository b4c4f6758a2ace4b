// A dataset cache cap (validate's cache points): the inotify keeper evicts the least recently closed files while they
// hold more than `capBytes`. No root or cgroup is needed, and the job's own memory cannot move the cap, as it moved a
// memory cgroup's (issue 13).
import { ExitCode, UserError } from '../../errors.js';
import { loadLibc } from '../kernel/libc.js';
import { KEEPER_TEXT } from './keeper-text.js';
import type { FileRef } from '../page-cache/page-cache.js';
import type { EventKeeperOptions } from './event-keeper.js';
import { startInotifyKeeper, type InotifyKeeper } from './inotify-keeper.js';

/** Options of requireCacheCap: the keeper's (drainMs 100 ms and sweepMs 1000 ms by default) and the cap. */
export type CacheCapOptions = Partial<EventKeeperOptions> & { capBytes: number };

/** Starts capping the page cache of `files` at `capBytes`, or throws a UserError naming why it cannot run here. */
export function requireCacheCap(
  files: readonly (FileRef & { bytes?: number })[],
  options: CacheCapOptions,
): InotifyKeeper {
  const load = loadLibc();
  const started = load.ok
    ? startInotifyKeeper(load.libc, files, {
        drainMs: Math.max(1, options.drainMs ?? 100),
        sweepMs: Math.max(1, options.sweepMs ?? 1000),
        capBytes: Math.max(0, options.capBytes),
        ledger: options.ledger,
      })
    : load;
  if (started.ok) return started.keeper;
  throw new UserError(KEEPER_TEXT.cannotCap(started.reason), ExitCode.Environment);
}
