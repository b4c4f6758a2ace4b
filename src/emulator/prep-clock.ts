import { openSync, readSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { loadLibc } from '../system/kernel/libc.js';

/**
 * The clock a sample's prep time is counted on.
 * - wall: prepMs of elapsed time per sample, whatever the CPU does meanwhile; robust on a busy machine, but CPU limits
 *   do not slow it down.
 * - cpu: prepMs of this thread's own CPU time (CLOCK_THREAD_CPUTIME_ID), so prep competes for CPUs like real decoding
 *   does, and an affinity mask or a cpuset with fewer CPUs slows it as it would a real pipeline.
 */
export type PrepClock = 'wall' | 'cpu';

export const PREP_CLOCKS: readonly PrepClock[] = ['wall', 'cpu'];

/**
 * A reader of the calling thread's CPU time in ms. The kernel's scheduler statistics (/proc/thread-self/schedstat: time
 * on CPU in ns, the same count CLOCK_THREAD_CPUTIME_ID reads) through a file kept open and re-read at offset 0, a few
 * microseconds a read. Loading a native addon in every loader worker thread instead crashed a job at start-up here
 * (koffi's module initialisation aborted the process), so koffi's clock_gettime is only the fallback for kernels
 * without schedstat.
 *
 * The schedstat count is brought up to date at scheduler ticks (4 ms at HZ=250), so one read may lag by up to a tick;
 * prep carries each sample's deadline to the next, so the lag moves time between samples and the mean stays exact.
 */
export function threadCpuClock(): () => number {
  let fd: number;
  try {
    fd = openSync('/proc/thread-self/schedstat', 'r');
  } catch {
    return clockGettimeClock();
  }
  const text = Buffer.alloc(96);
  return () => {
    const length = readSync(fd, text, 0, text.length, 0);
    return Number(text.toString('latin1', 0, length).split(' ', 1)[0]) / 1e6;
  };
}

/** clock_gettime(CLOCK_THREAD_CPUTIME_ID) through the libc bindings, loaded only when needed. */
function clockGettimeClock(): () => number {
  const load = loadLibc();
  if (!load.ok) throw new Error(`no thread CPU clock: ${load.reason}`);
  const { libc } = load;
  // -1 where the clock cannot be read: said once here, not as a prep time of -1000 ms on every read.
  if (libc.threadCpuSec() < 0) throw new Error('no thread CPU clock: clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed');
  return () => libc.threadCpuSec() * 1000;
}

/** A clock for `kind` whose reads are cheap enough for a hot loop. */
export function prepClock(kind: PrepClock): () => number {
  return kind === 'wall' ? () => performance.now() : threadCpuClock();
}
