/**
 * A deterministic stand-in for runMode: a job whose per-iteration times are
 * set per mode, on a virtual clock whose pace drifts linearly, with seeded
 * noise. Nothing is timed and nothing runs: the scheduler and the pooling can
 * be checked against a known truth.
 */
import { summarizeIterations } from '../../src/analysis/summarize.js';
import { mulberry32 } from '../../src/random.js';
import type { Mode } from '../../src/schema/events.js';
import type { Iteration, ModeResult } from '../../src/schema/profile.js';
import path from 'node:path';
import { processNode } from '../../src/profile/events-reader.js';
import type { StartEvent } from '../../src/schema/events.js';
import { FakeDataSource } from '../support/fake-data-source.js';
import type { ModeRunInput } from '../../src/profile/run-mode.js';
import type { ProfileRunInput } from '../../src/profile/run-profile.js';
import { MODES } from '../../src/schema/events.js';

/** The host name runMode's ranks fall back to when the job names none (os.hostname() in the real runner). */
export const FAKE_LOCAL_HOSTNAME = 'cli-host';

/** The job's truth: per-iteration wait and step in each mode, at the pace of time 0. */
export interface FakeJob {
  /** ms per iteration waiting for data, per mode. */
  waitMs: Record<Mode, number>;
  /** ms per iteration of the step itself, per mode (more than synthetic's when the loader competes for CPUs). */
  stepMs: Record<Mode, number>;
  /** Relative slowdown of the machine per virtual second (0.001: 0.1% slower each second). */
  driftPerSec: number;
  /** Relative SD of each iteration's time. */
  noise: number;
  /** Virtual seconds each run spends starting up before its first iteration. */
  startupSec: number;
  seed: number;
  /**
   * ms per iteration waiting for data in the cached mode when the run asks for this many loader workers
   * (DSA_NUM_WORKERS).
   */
  waitMsAtWorkers?: Record<number, number>;
  /** The job cannot change its loader's workers (the manual API, a protocol job): it reports its own 2. */
  ignoresWorkers?: boolean;
  /** The node its rank reports (start event hostname and nodeRank); absent: a job that names none. */
  node?: { hostname: string; nodeRank: number };
  /** Its rank number across the job (default 0). */
  rank?: number;
}

/** Loader workers the fake job's script sets. */
const SCRIPT_WORKERS = 2;

/** A fake runner plus the log of what it was asked to run. */
export interface FakeRunner {
  run: (input: ModeRunInput) => Promise<ModeResult>;
  /** Each call's mode, folder name, iteration budget and command as wrapped (throttle, affinity), in order. */
  calls: { mode: Mode; label: string; maxIterations: number; precision: number; argv: string[] }[];
}

export function fakeModeRunner(job: FakeJob): FakeRunner {
  const random = mulberry32(job.seed);
  const gaussian = (): number => {
    const u = Math.max(1e-12, random());
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
  };
  const originMs = 1_700_000_000_000;
  let clockMs = originMs;
  const calls: FakeRunner['calls'] = [];
  const run = async (input: ModeRunInput): Promise<ModeResult> => {
    const label = input.modeDir.split('/').pop()!;
    calls.push({
      mode: input.mode,
      label,
      maxIterations: input.maxIterations,
      precision: input.precision,
      argv: input.wrapArgv(input.argv),
    });
    // The mode's state is set up before the job and undone after, as runMode does.
    const prepared = await input.cacheState.prepare(input.mode, input.dataset);
    try {
      await input.beforeJobStart?.();
    } finally {
      await prepared.finish();
    }
    const startedAt = clockMs;
    clockMs += job.startupSec * 1000;
    const iterations: Iteration[] = [];
    const applied = input.numWorkers !== undefined && !job.ignoresWorkers;
    const workers = applied ? input.numWorkers! : SCRIPT_WORKERS;
    const truthWaitMs = applied ? (job.waitMsAtWorkers?.[workers] ?? job.waitMs[input.mode]) : job.waitMs[input.mode];
    for (let i = 0; i < input.maxIterations; i++) {
      const pace = 1 + job.driftPerSec * ((clockMs - originMs) / 1000);
      const jitter = 1 + job.noise * gaussian();
      const waitMs = Math.max(0, truthWaitMs * pace * jitter);
      const computeMs = Math.max(0, job.stepMs[input.mode] * pace * jitter);
      clockMs += waitMs + computeMs;
      iterations.push({ i, t: clockMs, waitMs, computeMs, samples: 32 });
    }
    const summary = summarizeIterations(iterations, { workers });
    return {
      mode: input.mode,
      status: 'ok',
      stopReason: 'budget',
      jobExitCode: 0,
      jobSignal: null,
      startedAt,
      wallSec: (clockMs - startedAt) / 1000,
      state: {
        proven: true,
        reason: 'fake',
        residentBytesBefore: 0,
        datasetBytes: 1e6,
        readBytes: null,
        consumedBytes: 0,
        readFraction: null,
        readBytesSource: 'fake',
      },
      ranks: [
        {
          rank: job.rank ?? 0,
          node: processNode({ start: (job.node ?? {}) as StartEvent }, FAKE_LOCAL_HOSTNAME),
          pid: 1,
          workers,
          loader: { workers, ...(applied ? { scriptWorkers: SCRIPT_WORKERS } : {}) },
          iterations,
          summary,
        },
      ],
      paceRank: job.rank ?? 0,
      summary,
      resources: [],
      jobCpuSecPerSample: null,
      storageReadBytesPerSec: null,
      badEventLines: 0,
      logs: { stdout: '', stderr: '' },
      cpus: null,
      ...(input.numWorkers !== undefined ? { workersAsked: input.numWorkers } : {}),
    };
  };
  return { run, calls };
}

/**
 * A profile run input for a fake job whose profile is written to
 * `<dir>/<name>.json`: every mode, on a made-up dataset (FakeDataSource: no
 * file listed or read, no page cache).
 */
export function fakeProfileInput(
  dir: string,
  name: string,
  modeRunner: ProfileRunInput['modeRunner'],
  overrides: Partial<ProfileRunInput> = {},
): ProfileRunInput {
  return {
    // A command that exists: runProfile checks it before anything runs, though the fake runner never starts it.
    argv: [process.execPath],
    cwd: dir,
    env: {},
    jobName: name,
    dataRoots: [path.join(dir, 'data')],
    modes: [...MODES],
    precision: 0.05,
    minIterations: 50,
    maxIterations: 400,
    timeoutSec: 60,
    stopGraceSec: 1,
    killGraceSec: 1,
    storageBwBytesPerSec: null,
    dropCaches: false,
    sync: true,
    pollMs: 250,
    outFile: path.join(dir, `${name}.json`),
    dataSource: new FakeDataSource(),
    nvidiaSmi: null,
    passes: 2,
    modeRunner,
    ...overrides,
  };
}
