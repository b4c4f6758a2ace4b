import type { Job } from './supervisor.js';

/**
 * The user's interrupts (Ctrl-C, SIGTERM) during a run of jobs: the first
 * stops the current job gently (SIGTERM to its process group), the second
 * kills its whole tree. What was measured before stays saved by the caller.
 */
export class Interrupts {
  private count = 0;
  private job: Job | null = null;
  private readonly removeHandler: () => void;

  constructor(onSignal: (handler: () => void) => () => void) {
    this.removeHandler = onSignal(() => {
      this.count++;
      if (this.count > 1) this.job?.kill();
      else void this.job?.terminate();
    });
  }

  /** Whether the user interrupted. */
  get interrupted(): boolean {
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
