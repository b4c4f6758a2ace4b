// Keeps a dataset cold for the whole cold mode (a second epoch would turn it warm) with the first keeper that runs
// here: fanotify (root, ~4 us a closed file), inotify (14 to 20 us), or scan (a CPU at ImageNet's size). docs/method.md
// has the costs.
import { ExitCode, UserError } from '../../errors.js';
import { loadLibc } from '../kernel/libc.js';
import { KEEPER_TEXT } from './keeper-text.js';
import type { FileRef } from '../page-cache/page-cache.js';
import type { CpuLedger } from '../kernel/cpu-ledger.js';
import { startFanotifyKeeper } from './fanotify-keeper.js';
import { startInotifyKeeper } from './inotify-keeper.js';
import { startScanKeeper } from './scan-keeper.js';
import type { ColdKeeper } from './keeper-types.js';

export type { ColdKeeper, ColdKeeperStats, KeeperMechanism } from './keeper-types.js';

/** Options of startColdKeeper. */
export interface ColdKeeperOptions {
  /** scan: time from one scan's start to the next; fanotify, inotify: time between drains of the event queue. */
  intervalMs: number;
  /** fanotify, inotify: time between sweeps of the files held open (default 1000 ms). */
  sweepIntervalMs?: number;
  /** 'auto' (default): fanotify, else inotify, else scanning; one named: that one, else scanning (tests). */
  mechanism?: 'auto' | 'fanotify' | 'inotify' | 'scan';
  /** Other files of the same directories must stay (fanotify's events carry no name: inotify runs instead). */
  onlyListed?: boolean;
  /** Charged with the keeper's CPU (the stats' cpuSec), as 'keeper'; absent: nothing is charged. */
  ledger?: CpuLedger;
}

/** Starts keeping `files` cold (failures are counted); a UserError only where page-cache control is unavailable. */
export function startColdKeeper(files: readonly FileRef[], options: ColdKeeperOptions): ColdKeeper {
  const load = loadLibc();
  if (!load.ok) {
    throw new UserError(KEEPER_TEXT.cannotKeepCold(load.reason), ExitCode.Environment);
  }
  const mechanism = options.mechanism ?? 'auto';
  const timers = {
    drainMs: Math.max(1, options.intervalMs),
    sweepMs: Math.max(1, options.sweepIntervalMs ?? 1000),
    ledger: options.ledger,
  };
  const reasons: string[] = [];
  if (mechanism === 'fanotify' || (mechanism === 'auto' && !options.onlyListed)) {
    const started = options.onlyListed
      ? { ok: false as const, reason: 'fanotify cannot tell the listed files from the others in their directories' }
      : startFanotifyKeeper(load.libc, files, timers);
    if (started.ok) return started.keeper;
    // Without root the inotify keeper is the expected one: only a named fanotify that fails is worth saying.
    if (mechanism === 'fanotify') reasons.push(started.reason);
  }
  if (mechanism === 'auto' || mechanism === 'inotify') {
    const started = startInotifyKeeper(load.libc, files, timers);
    if (started.ok) return started.keeper;
    reasons.push(started.reason);
  }
  const fallbackReason = reasons.length > 0 ? reasons.join('; ') : undefined;
  return startScanKeeper(load.libc, files, {
    intervalMs: options.intervalMs,
    ledger: options.ledger,
    ...(fallbackReason !== undefined ? { fallbackReason } : {}),
  });
}
