import { setTimeout as sleep } from 'node:timers/promises';
import { listPids, readProcStat } from '../system/kernel/proc.js';
import type { execa } from 'execa';
import { ExitCode, UserError } from '../errors.js';
import { KERNEL_TEXT } from '../system/kernel/kernel-text.js';

/** How a supervised job ended. */
export interface JobExit {
  /** Exit code, or null when a signal ended it. */
  exitCode: number | null;
  /** Signal that ended it, or null. */
  signal: string | null;
  /** True when we asked it to stop (enough data, timeout, interrupt) before it ended. */
  stopRequested: boolean;
  /** True when the per-mode timeout fired. */
  timedOut: boolean;
}

export interface JobOptions {
  /** Command and arguments (never a shell string). */
  argv: string[];
  /** The job's whole environment (the CLI's own, with the protocol's variables added). */
  env: Record<string, string | undefined>;
  /** File receiving the job's stdout. */
  stdoutFile: string;
  /** File receiving the job's stderr. */
  stderrFile: string;
  /** Kill the job tree after this many seconds; null: never (profile --continue: the run is the user's own). */
  timeoutSec: number | null;
  /** Seconds between SIGTERM and SIGKILL. */
  killGraceSec: number;
  /** Working directory. */
  cwd: string;
}

/** A running job, as runMode and Interrupts drive it: SupervisedJob, or FakeJob (test/support/fake-job.ts) in tests. */
export interface Job {
  /** Process id of the job's leader (also its process group's id). */
  readonly pid: number;
  /** Settles once the job and the rest of its process group are gone. */
  readonly done: Promise<JobExit>;
  /** Asks the job to stop gently, then kills it after the grace period. */
  terminate(): Promise<void>;
  /** Ends the job as its timeout does: terminated, its exit marked timed out. */
  timeOut(): Promise<void>;
  /** Kills the whole job at once. */
  kill(): void;
  /** Sends `signal` to the whole job as it is (profile --continue passes the user's signals on as themselves). */
  pass(signal: NodeJS.Signals): void;
  /** Records that the job was asked to stop through the protocol's stop file. */
  markStopRequested(): void;
}

/** Starts a job: SupervisedJob.start, or a fake's start in tests. */
export type StartJob = (options: JobOptions) => Promise<Job>;

/**
 * A training job in its own process group, its children (loader workers, ranks) signalled with it. execa's cleanup does
 * not cover detached children: an 'exit' hook kills the group if the CLI exits first, and a watchdog outside the group
 * if the CLI dies without running any hook (SIGKILL, the OOM killer).
 */
export class SupervisedJob implements Job {
  readonly pid: number;
  readonly done: Promise<JobExit>;
  private stopRequested = false;
  private timedOut = false;
  private exited = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly onToolExit = () => {
    this.signalGroup('SIGKILL');
    stopWatchdog(this.watchdog);
  };

  private constructor(
    private readonly options: JobOptions,
    subprocess: ReturnType<typeof execa>,
    private readonly watchdog: ReturnType<typeof execa>,
  ) {
    if (subprocess.pid === undefined) throw new Error('job did not start');
    this.pid = subprocess.pid;
    process.once('exit', this.onToolExit);
    if (options.timeoutSec !== null) {
      const timeout = setTimeout(() => void this.timeOut(), options.timeoutSec * 1000);
      timeout.unref();
      this.timers.push(timeout);
    }
    this.done = subprocess.then(async (result) => {
      this.exited = true;
      for (const timer of this.timers) clearTimeout(timer);
      // The leader is gone; DataLoader workers or other children may not be.
      await this.reapGroup();
      stopWatchdog(this.watchdog);
      process.off('exit', this.onToolExit);
      return {
        exitCode: result.exitCode ?? null,
        signal: result.signal ?? null,
        stopRequested: this.stopRequested,
        timedOut: this.timedOut,
      };
    });
  }

  /** Starts the job; a missing command is a UserError (CommandNotFound). */
  static async start(options: JobOptions): Promise<SupervisedJob> {
    const [file, ...args] = options.argv;
    const { execa } = await import('execa');
    const subprocess = execa(file, args, {
      cwd: options.cwd,
      env: options.env,
      extendEnv: false,
      detached: true,
      cleanup: false,
      reject: false,
      stdin: 'ignore',
      stdout: { file: options.stdoutFile },
      stderr: { file: options.stderrFile },
    });
    // The watchdog before any await (a CLI killed while awaiting 'spawn' left its job with none); no pid, no job.
    const watchdog = subprocess.pid === undefined ? null : startWatchdog(execa, process.pid, subprocess.pid);
    const spawnError = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
      subprocess.once('spawn', () => resolve(null));
      subprocess.once('error', (error: NodeJS.ErrnoException) => resolve(error));
    });
    if (spawnError || watchdog === null) {
      if (watchdog) stopWatchdog(watchdog);
      await subprocess.catch(() => undefined);
      const reason = spawnError?.code === 'EACCES' ? KERNEL_TEXT.notExecutable : KERNEL_TEXT.notFound;
      throw new UserError(KERNEL_TEXT.commandNotRunnable(file, reason), ExitCode.CommandNotFound);
    }
    return new SupervisedJob(options, subprocess, watchdog);
  }

  /** Asks the job to stop gently (SIGTERM to the group), then kills it after the grace period. */
  async terminate(): Promise<void> {
    this.stopRequested = true;
    if (this.exited) return;
    this.signalGroup('SIGTERM');
    const kill = setTimeout(() => this.signalGroup('SIGKILL'), this.options.killGraceSec * 1000);
    kill.unref();
    this.timers.push(kill);
  }

  async timeOut(): Promise<void> {
    this.timedOut = true;
    await this.terminate();
  }

  /** Kills the whole group at once. */
  kill(): void {
    this.stopRequested = true;
    this.signalGroup('SIGKILL');
  }

  pass(signal: NodeJS.Signals): void {
    // Once the leader is gone its pid may be another group's: gate --against's SIGSTOP must never reach that one.
    if (!this.exited) this.signalGroup(signal);
  }

  /** Records that the job was asked to stop through the protocol's stop file. */
  markStopRequested(): void {
    this.stopRequested = true;
  }

  /** Kills what is left of the group after the leader exited, and waits until it is empty. */
  private async reapGroup(): Promise<void> {
    if (!this.groupAlive()) return;
    this.signalGroup('SIGTERM');
    const deadline = Date.now() + this.options.killGraceSec * 1000;
    while (this.groupAlive() && Date.now() < deadline) await sleep(50);
    if (this.groupAlive()) this.signalGroup('SIGKILL');
    const killDeadline = Date.now() + 5000;
    while (this.groupAlive() && Date.now() < killDeadline) await sleep(20);
  }

  /** True while a non-zombie process of the group exists (zombies wait for init to reap them). */
  private groupAlive(): boolean {
    try {
      process.kill(-this.pid, 0);
    } catch {
      return false;
    }
    return listPids().some((pid) => {
      const stat = readProcStat(pid);
      return stat !== null && stat.pgrp === this.pid && stat.state !== 'Z' && stat.state !== 'X';
    });
  }

  private signalGroup(signal: NodeJS.Signals): void {
    try {
      process.kill(-this.pid, signal);
    } catch {
      // The group is already gone.
    }
  }
}

/** Ends the watchdog and its sleep (its own group) once the CLI no longer needs it. */
function stopWatchdog(watchdog: ReturnType<typeof execa>): void {
  try {
    if (watchdog.pid !== undefined) process.kill(-watchdog.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** A process outside both groups that kills the job's group once the CLI is gone (pids as arguments, not text). */
function startWatchdog(run: typeof execa, cliPid: number, jobPgid: number): ReturnType<typeof execa> {
  // No '--' before the group: dash's kill takes it for a pid, fails, and kills nothing (seen: a torchrun job left
  // behind).
  const script = 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; kill -KILL "-$2" 2>/dev/null';
  const watchdog = run('sh', ['-c', script, 'ds-analyzer-watchdog', String(cliPid), String(jobPgid)], {
    detached: true,
    cleanup: false,
    reject: false,
    stdio: 'ignore',
  });
  watchdog.unref();
  return watchdog;
}
