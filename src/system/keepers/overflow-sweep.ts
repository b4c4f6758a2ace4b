// What an event-driven keeper does after its queue lost events: it can no
// longer know which files the job read, so it evicts every file of the
// dataset once, FILES_PER_TURN at a time, draining its queue between turns
// (the sweep's own events must not overflow it again) and yielding to the
// event loop. Shared by fanotify-keeper.ts and inotify-keeper.ts.
import { setImmediate as yieldToLoop } from 'node:timers/promises';

const FILES_PER_TURN = 256;

/** What the sweep needs from its keeper. */
export interface OverflowSweepHooks {
  /** Files in the dataset's table. */
  files: number;
  /** Evicts file `k` (counting it, or the failure). */
  evict(k: number): void;
  /** Files to leave alone (a cache cap keeps what its LRU holds). */
  keep?(k: number): boolean;
  /** Reads the keeper's event queue. */
  drain(): void;
  /** Runs work on the keeper's CPU meter. */
  metered(work: () => void): void;
  /** Counts a failure of the sweep itself. */
  fail(what: string, error: unknown): void;
  /** True once the keeper is stopped. */
  stopped(): boolean;
}

/**
 * The sweep of one keeper: request() after an overflow event, start() from the keeper's timer, settled() to wait for
 * it.
 */
export interface OverflowSweep {
  request(): void;
  start(): void;
  settled(): Promise<void>;
  /**
   * A keeper's scanNow: `work` (a drain and a sweep) metered between any sweep running and any it asks for, both
   * awaited.
   */
  scanNow(work: () => void): Promise<void>;
}

export function overflowSweep(hooks: OverflowSweepHooks): OverflowSweep {
  let pending = false;
  let running: Promise<void> | undefined;
  const sweep = async (): Promise<void> => {
    // An overflow during the sweep asks for another.
    while (pending && !hooks.stopped()) {
      pending = false;
      for (let first = 0; first < hooks.files && !hooks.stopped(); first += FILES_PER_TURN) {
        hooks.metered(() => {
          for (let k = first; k < Math.min(hooks.files, first + FILES_PER_TURN); k++)
            if (!hooks.keep?.(k)) hooks.evict(k);
          hooks.drain();
        });
        await yieldToLoop();
      }
    }
  };
  const start = (): void => {
    if (!pending || running) return;
    running = sweep()
      .catch((error: unknown) => hooks.fail('(overflow sweep)', error))
      .finally(() => (running = undefined));
  };
  return {
    request: () => {
      pending = true;
    },
    start,
    settled: async () => {
      await running;
    },
    scanNow: async (work) => {
      if (hooks.stopped()) return;
      await running;
      hooks.metered(work);
      start();
      await running;
    },
  };
}
