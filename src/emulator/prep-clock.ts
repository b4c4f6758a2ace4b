import { performance } from 'node:perf_hooks';
import koffi from 'koffi';

/**
 * The clock a sample's prep time is counted on.
 * - wall: prepMs of elapsed time per sample, whatever the CPU does meanwhile;
 *   robust on a busy machine, but CPU limits do not slow it down.
 * - cpu: prepMs of this thread's own CPU time (CLOCK_THREAD_CPUTIME_ID), so
 *   prep competes for CPUs like real decoding does, and an affinity mask or a
 *   cpuset with fewer CPUs slows it as it would a real pipeline.
 */
export type PrepClock = 'wall' | 'cpu';

export const PREP_CLOCKS: readonly PrepClock[] = ['wall', 'cpu'];

const CLOCK_THREAD_CPUTIME_ID = 3;

/** A reader of the calling thread's CPU time in ms. Each read is a syscall (~1-12 us here). */
export function threadCpuClock(): () => number {
  const libc = koffi.load('libc.so.6');
  // A plain buffer as the out-parameter: marshalling a struct costs more than the call.
  const clockGettime = libc.func('clock_gettime', 'int', ['int', 'void *']);
  const timespec = Buffer.alloc(16);
  return () => {
    clockGettime(CLOCK_THREAD_CPUTIME_ID, timespec);
    return Number(timespec.readBigInt64LE(0)) * 1000 + Number(timespec.readBigInt64LE(8)) / 1e6;
  };
}

/** A clock for `kind` whose reads are cheap enough for a hot loop. */
export function prepClock(kind: PrepClock): () => number {
  return kind === 'wall' ? () => performance.now() : threadCpuClock();
}
