import { ControlFile, fromEnv, StopFile } from '../../src/protocol/writer.js';
import { ENV } from '../../src/schema/events.js';
import type { Job, JobExit, JobOptions, StartJob } from '../../src/profile/supervisor.js';

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
    const writer = fromEnv(
      options.env,
      { workers: script.workers, batchSize: script.samples, source: 'fake-job' },
      { pid: FAKE_JOB_PID, clock: () => clockMs, flushOnExit: false },
    );
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
    let timedOut = false;
    const done = new Promise<JobExit>((resolve) =>
      setImmediate(() => resolve({ exitCode: script.exitCode ?? 0, signal: null, stopRequested, timedOut })),
    );
    return {
      pid: FAKE_JOB_PID,
      done,
      terminate: async () => {
        stopRequested = true;
      },
      timeOut: async () => {
        timedOut = true;
        stopRequested = true;
      },
      kill: () => {
        stopRequested = true;
      },
      pass: () => undefined,
      markStopRequested: () => {
        stopRequested = true;
      },
    };
  };
  return { start, started };
}

/** What a FakeSwitchingJob does: each mode's wait per batch, on the real clock (the CLI's blocks are timed on it). */
export interface FakeSwitchingScript {
  /** ms each iteration waits for its batch, by mode. */
  waitMs: Record<'synthetic' | 'cached' | 'cold', number>;
  /** ms each iteration computes. */
  computeMs: number;
  /** Batches its loader holds ahead, reported at each switch and served at the old mode's wait. */
  inFlight: number;
  /** Whether it offers to switch (switchModes); false: a protocol job that ignores DSA_CONTROL_FILE. */
  switches: boolean;
  /** Iterations after which its data runs out (it ends, exit 0); default: none. */
  dataIterations?: number;
  /** The iteration at which it hangs (a deadlocked loader) until it is stopped; default: none. */
  hangAtIteration?: number;
}

/**
 * A stand-in for SupervisedJob.start that switches modes as a real job under
 * the hook does: it runs in this process, one iteration a few ms of the real
 * clock, looks at the control file each iteration, and writes a block event
 * at each switch; its first `inFlight` batches after a switch take the old
 * mode's wait. It ends at the stop file or when its data runs out.
 */
export function fakeSwitchingJobStarter(script: FakeSwitchingScript): FakeJobStarter {
  const started: JobOptions[] = [];
  const start = async (options: JobOptions): Promise<Job> => {
    started.push(options);
    const env = options.env;
    const writer = fromEnv(
      env,
      { workers: 1, batchSize: 1, source: 'fake-job', ...(script.switches ? { switchModes: true } : {}) },
      { pid: FAKE_JOB_PID, flushIntervalMs: 0 },
    );
    const control = new ControlFile(script.switches ? env[ENV.controlFile] : undefined, 0);
    const stop = new StopFile(env[ENV.stopFile], 0);
    let mode = env[ENV.mode] as keyof FakeSwitchingScript['waitMs'];
    let carried: { mode: typeof mode; left: number } = { mode, left: 0 };
    let stopRequested = false;
    let stopped = false;
    let timedOut = false;
    const done = (async (): Promise<JobExit> => {
      let i = 0;
      let asked = false;
      while (!stopped) {
        asked = stop.requested();
        if (asked || i >= (script.dataIterations ?? Infinity)) break;
        const next = control.poll();
        if (next) {
          writer?.block({ block: next.block, mode: next.mode, i, inFlight: script.inFlight });
          carried = { mode, left: script.inFlight };
          mode = next.mode;
        }
        const waitMs = carried.left > 0 ? script.waitMs[carried.mode] : script.waitMs[mode];
        if (carried.left > 0) carried.left--;
        while (i === script.hangAtIteration && !stopped) await sleepMs(10);
        if (stopped) break;
        await sleepMs(waitMs + script.computeMs);
        writer?.iter(i, waitMs, script.computeMs, 1);
        i++;
      }
      writer?.end(stopped ? 'error' : asked ? 'stop-file' : 'exhausted', i);
      return { exitCode: 0, signal: null, stopRequested, timedOut };
    })();
    return {
      pid: FAKE_JOB_PID,
      done,
      terminate: async () => {
        stopped = true;
        stopRequested = true;
      },
      timeOut: async () => {
        stopped = true;
        stopRequested = true;
        timedOut = true;
      },
      kill: () => {
        stopped = true;
        stopRequested = true;
      },
      pass: () => undefined,
      markStopRequested: () => {
        stopRequested = true;
      },
    };
  };
  return { start, started };
}

function sleepMs(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
