import { fromEnv } from '../protocol/writer.js';
import { ENV } from '../schema/events.js';
import type { Job, JobExit, JobOptions, StartJob } from './supervisor.js';

/** What a FakeJob does, on its virtual clock. */
export interface FakeJobScript {
  /** Iterations it runs at most (fewer when the profiler's budget, DSA_ITERATIONS, is smaller). */
  iterations: number;
  /** ms each iteration waits for its batch. */
  waitMs: number;
  /** ms each iteration computes. */
  computeMs: number;
  /** Samples per batch. */
  samples: number;
  /** Bytes of sample files per batch, when the job reports them. */
  bytes?: number;
  /** Loader workers named in the start event. */
  workers?: number;
  /** Time of its start event, ms since the epoch; iterations follow back to back. */
  startMs: number;
  /** Its exit code (default 0). */
  exitCode?: number;
}

/** A fake job's starter, and what it was asked to run. */
export interface FakeJobStarter {
  /** Starts a FakeJob (pass as ModeRunInput.startJob). */
  start: StartJob;
  /** The options of each start, in order. */
  started: JobOptions[];
}

/** The pid a fake job claims: above Linux's largest pid_max (2^22), so no real process has it. */
const FAKE_JOB_PID = 2 ** 22 + 1;

/**
 * A deterministic stand-in for SupervisedJob.start: nothing is spawned. The
 * "job" speaks protocol v1 through the job-side writer (src/protocol/writer.ts)
 * with the environment it was given (DSA_MODE, DSA_EVENTS_DIR, DSA_ITERATIONS),
 * on a virtual clock: a start event, its iterations and an end event, all
 * written when it starts; then it exits.
 */
export function fakeJobStarter(script: FakeJobScript): FakeJobStarter {
  const started: JobOptions[] = [];
  const start = async (options: JobOptions): Promise<Job> => {
    started.push(options);
    let clockMs = script.startMs;
    const writer = fromEnv(options.env, { workers: script.workers, batchSize: script.samples, source: 'fake-job' }, { pid: FAKE_JOB_PID, clock: () => clockMs, flushOnExit: false });
    const budget = Number(options.env[ENV.iterations] ?? script.iterations);
    const iterations = Math.min(script.iterations, budget);
    for (let i = 0; i < iterations; i++) {
      // An iteration's event is written when its batch arrives, after the wait.
      clockMs += script.waitMs;
      writer?.iter(i, script.waitMs, script.computeMs, script.samples, script.bytes);
      clockMs += script.computeMs;
    }
    writer?.end(iterations === budget ? 'budget' : 'exhausted', iterations);
    let stopRequested = false;
    const done = new Promise<JobExit>((resolve) =>
      setImmediate(() => resolve({ exitCode: script.exitCode ?? 0, signal: null, stopRequested, timedOut: false })),
    );
    return {
      pid: FAKE_JOB_PID,
      done,
      terminate: async () => void (stopRequested = true),
      kill: () => void (stopRequested = true),
      markStopRequested: () => void (stopRequested = true),
    };
  };
  return { start, started };
}
