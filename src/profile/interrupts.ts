import type { Job } from './supervisor.js';

/**
 * The user's interrupts (Ctrl-C, SIGTERM) during a run of jobs: the first
 * stops the current job gently (SIGTERM to its process group), the second
 * kills its whole tree. What was measured before stays saved by the caller.
 */
export class Interrupts {
  private count = 0;
  private stopped = false;
  private job: Job | null = null;
  private readonly removeHandler: () => void;
  private readonly listeners: (() => void)[] = [];
  private readonly aborter = new AbortController();

  constructor(onSignal: (handler: () => void) => () => void) {
    this.removeHandler = onSignal(() => {
      this.count++;
      this.aborter.abort();
      if (this.count > 1 || this.stopped) this.job?.kill();
      else void this.job?.terminate();
      for (const listener of this.listeners) listener();
    });
  }

  /** Runs `listener` at each interrupt of the user (a multi-node profile tells the other nodes). */
  onInterrupt(listener: () => void): void {
    this.listeners.push(listener);
  }

  /**
   * Stops the current job as a first interrupt would, for a cause of the
   * profiler's own (the other nodes of the job are gone): the run then ends
   * as interrupted, and no later run starts.
   */
  stop(): void {
    this.stopped = true;
    this.aborter.abort();
    void this.job?.terminate();
  }

  /** Aborted at the first interrupt (or stop()): the profiler's own waits between jobs (a download) end at once. */
  get signal(): AbortSignal {
    return this.aborter.signal;
  }

  /** Whether the runs were interrupted: by the user, or by stop(). */
  get interrupted(): boolean {
    return this.count > 0 || this.stopped;
  }

  /** Whether the user interrupted (a signal, not stop()). */
  get userInterrupted(): boolean {
    return this.count > 0;
  }

  /** The job now running; an interrupt that came while it was starting stops it at once. */
  attach(job: Job): void {
    this.job = job;
    if (this.interrupted) void job.terminate();
  }

  /** The job has ended. */
  detach(): void {
    this.job = null;
  }

  /** Removes the signal handler. */
  dispose(): void {
    this.removeHandler();
  }
}
