import type { Job } from './supervisor.js';

/** Signals that are the job's own (Slurm's warning before a time limit, a tracker's hook): passed on, never an interrupt. */
const JOB_SIGNALS: ReadonlySet<NodeJS.Signals> = new Set(['SIGUSR1', 'SIGUSR2']);

/**
 * The user's interrupts during a run of jobs: the first stops the current job gently, the second kills its tree. A job
 * the profile rides on (passOn) gets each signal as itself (it may save a checkpoint); the third kills it.
 */
export class Interrupts {
  private count = 0;
  private stopped = false;
  private passing = false;
  private job: Job | null = null;
  private readonly removeHandler: () => void;
  private readonly listeners: (() => void)[] = [];
  private readonly aborter = new AbortController();

  constructor(onSignal: (handler: (signal?: NodeJS.Signals) => void) => () => void) {
    this.removeHandler = onSignal((signal) => this.received(signal));
  }

  private received(signal: NodeJS.Signals | undefined): void {
    if (signal !== undefined && JOB_SIGNALS.has(signal)) {
      this.job?.pass(signal);
      return;
    }
    this.count++;
    this.aborter.abort();
    if (this.passing && signal !== undefined && this.count < 3) this.job?.pass(signal);
    else if (this.count > 1 || this.stopped) this.job?.kill();
    else void this.job?.terminate();
    for (const listener of this.listeners) listener();
  }

  /** Runs `listener` at each interrupt of the user (a multi-node profile tells the other nodes). */
  onInterrupt(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Stops the current job as a first interrupt would, for the profiler's own cause (the other nodes are gone). */
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

  /** The job the profile now rides on (profile --continue): signals reach it as themselves. */
  passOn(job: Job): void {
    this.passing = true;
    this.job = job;
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
