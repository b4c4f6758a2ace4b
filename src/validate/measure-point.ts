// How each kind of validate point is measured: what it holds while the job runs (a cache cap, an affinity mask, a
// throttle, delayed requests), the run, and the outcome it hands to run-validate.ts.
import { join } from 'node:path';
import { summarizeIterations } from '../analysis/summarize.js';
import { fetchedSeriesOf, windowRates } from '../profile/window-rates.js';
import { capObstacle, type CappedState } from '../profile/data-sources/cache-cap.js';
import type { OpenedSource } from '../profile/data-sources/data-source.js';
import type { Throttle } from '../profile/data-sources/throttle.js';
import { throttleReads, workersNotApplied, type RunRequest } from '../profile/run-setup.js';
import type { Iteration, Profile, ModeResult } from '../schema/profile.js';
import { threadAffinities, withCpus } from '../system/cgroups/affinity.js';
import type { Dataset } from '../system/dataset/dataset.js';
import { ExitCode, UserError } from '../errors.js';
import { judgeAffinity, judgeResidency, type AffinityVerdict } from './held.js';
import { pointKind, type PointKindName, type PointOf, type ValidationPoint } from './point-kinds.js';
import { pointOutcome, type PointOutcome } from './point-outcome.js';
import { ENV } from '../schema/events.js';
import { formatRate } from '../units.js';
import { VALIDATE_TEXT } from './validate-text.js';
import { fileSink } from '../store/artifact-sink.js';
import { CONTROL_MIN_ITERATIONS } from '../profile/run-defaults.js';
import type { PlannedPoint } from './plan.js';
import { startWriteThrottle, writeThrottleObstacle } from '../system/cgroups/write-throttle.js';
import { measuredWrites, stallWithinTolerance, writeHeld, type WritePrediction } from './write-point.js';
import type { PointProgress, ValidateHooks, ValidateInput, WriteThrottler } from './run-validate.js';

export const cgroupWriteThrottle: WriteThrottler = { obstacle: writeThrottleObstacle, start: startWriteThrottle };

export interface PointContext {
  input: ValidateInput;
  hooks: ValidateHooks;
  dataset: Dataset;
  /** The plan's iterations and budget for this point: the run holds to what the progress line shows. */
  planned: PlannedPoint;
  /** Runs the job once with the shared settings, under the user's interrupts. */
  run: (request: RunRequest) => Promise<ModeResult>;
  /** The profile's storage throttle, for the cache points; null without one. */
  throttle: Throttle | null;
  index: number;
  /** Write points: the model's answer at the point's rate; null elsewhere. */
  writePrediction: WritePrediction | null;
}

/** The points that run the job as profiled but for one setting: its CPUs, its loader workers, or none (the control). */
type SettingsPoint = PointOf<'control' | 'cpus' | 'workers'>;

/** What every point's run asks for beyond the shared settings: the control's budget and no wrapping. */
type PointRun = Omit<RunRequest, 'mode' | 'cacheState' | 'modeDir'>;

/** Measures one point of a kind: sets up what it holds, runs the job and builds its outcome. */
type PointMeasurer<P extends ValidationPoint> = (
  point: P,
  ctx: PointContext,
  common: PointRun,
  modeDir: string,
) => Promise<PointOutcome>;

export async function measurePoint(point: ValidationPoint, ctx: PointContext): Promise<PointOutcome> {
  const { input } = ctx;
  const modeDir = join(input.workDir, `point-${ctx.index + 1}-${pointKind(point).folderLabel(point)}`);
  const common: PointRun = {
    argv: input.profile.command,
    precision: input.precision,
    minIterations: CONTROL_MIN_ITERATIONS,
    maxIterations: ctx.planned.maxIterations,
    wrapArgv: (argv) => argv,
  };
  // The table pairs each kind with its own measurer; TypeScript cannot follow that through a union.
  const measure = MEASURERS[point.kind] as PointMeasurer<ValidationPoint>;
  return measure(point, ctx, common, modeDir);
}

/**
 * A write point: the cached mode (the data in memory, so the saves are what the throttle changes) with the job's writes
 * to every disk held to the point's rate, set up for this run alone; its saves' own events give its checkpoint stall,
 * by the profile's arithmetic (checkpointStall).
 */
const measureWritePoint: PointMeasurer<PointOf<'write'>> = async (point, ctx, common, modeDir) => {
  const { input } = ctx;
  const prediction = ctx.writePrediction!;
  const held = (input.writeThrottle ?? cgroupWriteThrottle).start(
    point.bytesPerSec,
    `validate-${process.pid}-write-${ctx.index}`,
    input.env,
  );
  const result = await runHeld(ctx, held, {
    ...common,
    mode: 'cached',
    modeDir,
    cacheState: input.dataSource.modeState,
    onProgress: (progress) => ctx.hooks.onProgress?.(ctx.index, progressOf(progress)),
  });
  const writes = measuredWrites(result);
  const ok = result.status === 'ok';
  const iterMs = ok ? (result.summary?.iterMs.mean ?? null) : null;
  // A synced save faster than its bytes at the rate was not held: it tested another setting.
  const settingHeld = ok ? writeHeld(prediction, writes, point.bytesPerSec) : null;
  const note =
    VALIDATE_TEXT.writeNote(formatRate(point.bytesPerSec), held.devices, result.status, result.stopReason) +
    (writes.perSaveMs === null
      ? VALIDATE_TEXT.writeNoSaves
      : VALIDATE_TEXT.writeSaves(writes.saves, writes.perSaveMs, prediction.perSaveMs)) +
    (settingHeld === false
      ? VALIDATE_TEXT.writeNotHeld(writes.perSaveMs!, (prediction.bytesPerSave! / point.bytesPerSec) * 1000)
      : '');
  return pointOutcome(result, note, {
    settingHeld,
    checkpoint: {
      devices: held.devices,
      cgroup: held.version,
      synced: prediction.synced,
      saves: writes.saves,
      predictedPerSaveMs: prediction.perSaveMs,
      measuredPerSaveMs: writes.perSaveMs,
      predictedStallMsPerIter: prediction.stallMsPerIter,
      measuredStallMsPerIter: writes.stallMsPerIter,
      predictedIterMs: prediction.iterMs,
      measuredIterMs: iterMs,
      stallWithinTolerance: stallWithinTolerance(prediction.stallMsPerIter, writes.stallMsPerIter, iterMs),
      caveat: !prediction.synced && held.version === 'v1' ? VALIDATE_TEXT.bufferedOnV1 : null,
    },
  });
};

/** The median time to a first byte the profile's cold mode measured, s; null where it saw no requests. */
function profiledLatencySec(profile: Profile): number | null {
  const firstByte = profile.modes.cold?.network?.firstByteMs;
  return firstByte ? firstByte.p50 / 1000 : null;
}

/**
 * Why the latency points cannot run, or null: no requests were seen, the data's requests cannot be delayed, or one asks
 * for less than was measured.
 */
export function latencyObstacle(
  profile: Profile,
  points: readonly ValidationPoint[],
  source: OpenedSource,
): string | null {
  const asked = points.flatMap((p) => (p.kind === 'latency' ? [p.latencySec] : []));
  if (asked.length === 0) return null;
  const profiled = profiledLatencySec(profile);
  if (profiled === null) return VALIDATE_TEXT.noLatency;
  if (!source.delayRequests) return VALIDATE_TEXT.noLatency;
  const below = asked.find((sec) => sec < profiled);
  return below === undefined ? null : VALIDATE_TEXT.latencyBelow(below * 1000, profiled * 1000);
}

/**
 * A latency point: the cold mode with every request to the origin held at the metering proxy for the asked time less
 * the profiled one, so its first byte comes when a store that far away would send it.
 */
const measureLatencyPoint: PointMeasurer<PointOf<'latency'>> = (point, ctx, common, modeDir) => {
  const addedSec = Math.max(0, point.latencySec - (profiledLatencySec(ctx.input.profile) ?? point.latencySec));
  return measureColdPoint(
    ctx,
    common,
    modeDir,
    async () => ctx.input.dataSource.delayRequests!(addedSec),
    (result, unproven) =>
      VALIDATE_TEXT.latencyNote(
        (point.latencySec * 1000).toFixed(0),
        (addedSec * 1000).toFixed(1),
        result.status,
        result.stopReason,
        unproven,
      ),
  );
};

/** The name of a bandwidth point's throttle (its cgroup): this process's, apart from its other points'. */
const pointThrottleName = (index: number) => `validate-${process.pid}-bw-${index}`;

/**
 * A bandwidth point: the cold mode with the data's reads held to the point's bandwidth (a storage throttle, or for
 * remote data the metering proxy's cap), set up for this run alone.
 */
const measureBandwidthPoint: PointMeasurer<PointOf<'bandwidth'>> = (point, ctx, common, modeDir) => {
  const { input } = ctx;
  return measureColdPoint(
    ctx,
    common,
    modeDir,
    () => throttleReads(input.dataSource, ctx.dataset, point.bytesPerSec, pointThrottleName(ctx.index), input.env),
    (result, unproven) =>
      VALIDATE_TEXT.coldNote(formatRate(point.bytesPerSec), result.status, result.stopReason, unproven),
  );
};

/** The cold mode under a hold set up for this run alone (a throttle, delayed requests), removed however it ends. */
async function measureColdPoint(
  ctx: PointContext,
  common: PointRun,
  modeDir: string,
  hold: () => Promise<Throttle>,
  noteOf: (result: ModeResult, unproven: string) => string,
): Promise<PointOutcome> {
  const { input } = ctx;
  const held = await hold();
  const result = await runHeld(ctx, held, { ...common, mode: 'cold', modeDir, cacheState: input.dataSource.modeState });
  const steady = result.ranks.find((r) => r.rank === result.paceRank)?.iterations.filter((it) => !it.warmup) ?? [];
  return pointOutcome(
    result,
    noteOf(result, result.state.proven ? '' : VALIDATE_TEXT.coldUnproven(result.state.reason)),
    {
      // A cold mode that was not cold tested another setting: left out of the errors, as a cap that did not hold is.
      settingHeld: result.status === 'ok' ? result.state.proven : null,
      readBytesPerSample: readBytesPerSample(result, steady),
      firstBatchSec: result.firstBatch?.sec ?? null,
    },
  );
}

/** Runs a point's job under a hold set up for this run alone (a throttle, delayed requests), removed however it ends. */
async function runHeld(
  ctx: PointContext,
  held: Pick<Throttle, 'wrap' | 'remove'>,
  request: Omit<RunRequest, 'wrapArgv'>,
): Promise<ModeResult> {
  try {
    return await ctx.run({ ...request, wrapArgv: held.wrap });
  } finally {
    await held.remove().catch(() => undefined);
  }
}

/**
 * A control, CPU or loader-workers point: the cached mode at the point's setting, then whether the setting held (every
 * thread inside the affinity mask; the job ran the workers asked).
 */
const measureSettingsPoint: PointMeasurer<SettingsPoint> = async (point, ctx, common, modeDir) => {
  const { input } = ctx;
  const affinity = point.kind === 'cpus' ? withCpus(point.cpus, input.profile.command, input.env.PATH) : null;
  const watch = affinityWatch(affinity);
  const result = await ctx.run({
    ...common,
    mode: 'cached',
    argv: affinity?.argv ?? input.profile.command,
    modeDir,
    cacheState: input.dataSource.modeState,
    ...(point.kind === 'workers' ? { numWorkers: point.workers } : {}),
    onJobStarted: watch.onJobStarted,
    onProgress: (progress) => {
      ctx.hooks.onProgress?.(ctx.index, progressOf(progress));
      watch.onProgress(progress.iterations);
    },
  });
  const checked = watch.verdict();
  const where = VALIDATE_TEXT.cachedWhere(affinity?.cpus ?? null, point.kind === 'workers' ? point.workers : null);
  // A job that cannot change its loader (manual API, protocol) ran its own count: that tested another setting.
  const ranWorkers = point.kind === 'workers' ? workersNotApplied(result, point.workers) : null;
  const settingHeld = point.kind === 'workers' && result.status === 'ok' ? ranWorkers === null : null;
  const applied =
    affinityWords(checked) + (ranWorkers !== null ? VALIDATE_TEXT.workersNotApplied(ranWorkers, ENV.numWorkers) : '');
  return pointOutcome(result, VALIDATE_TEXT.cachedNote(where, result.status, result.stopReason, applied), {
    affinity: checked,
    settingHeld,
  });
};

/** Whether an affinity mask reached every thread of the job: checked once its loader workers exist. */
function affinityWatch(affinity: { cpus: number[] } | null): {
  onJobStarted: (job: { pid: number }) => void;
  onProgress: (iterations: number) => void;
  verdict: () => AffinityVerdict | null;
} {
  let job: { pid: number } | null = null;
  let verdict: AffinityVerdict | null = null;
  return {
    onJobStarted: (started) => {
      job = started;
    },
    onProgress: (iterations) => {
      // Once the job iterates, its loader workers exist: every thread must be inside the mask.
      if (affinity && verdict === null && iterations >= AFFINITY_CHECK_ITERATIONS && job) {
        const threads = threadAffinities(job.pid);
        if (threads.length > 0) verdict = judgeAffinity(threads, affinity.cpus);
      }
    },
    verdict: () =>
      affinity && verdict === null
        ? { ...judgeAffinity([], affinity.cpus), example: VALIDATE_TEXT.affinityUnchecked }
        : verdict,
  };
}

/**
 * Bytes the data source fetched per consumed sample over `steady` iterations of a run (its hit ratio's evidence); null
 * when not covered.
 */
function readBytesPerSample(result: ModeResult, steady: Iteration[]): number | null {
  return windowRates(fetchedSeriesOf(result.resources), steady, (r) => r.bytes)?.perSample ?? null;
}

/** Iterations after which a CPU point's threads are checked (loader workers started). */
const AFFINITY_CHECK_ITERATIONS = 5;

/** Files of each group (held by the cap, not held) a residency reading reads at most; more are sampled. */
const RESIDENCY_SAMPLE_FILES = 512;
/** Least time between two residency readings. */
const READING_INTERVAL_MS = 250;
/** Largest share of a CPU the readings may take: a costly reading spaces the next ones out. */
const READING_DUTY_CYCLE = 0.02;

/** A cache point's residency readings through its cap, spaced so that they take little of the job's time. */
class ResidencyReadings {
  readonly all: { iterations: number; residentBytes: number; exact: boolean }[] = [];
  /** The last reading's resident bytes; null before the first. */
  last: number | null = null;
  private lastAt = 0;
  private costMs = 0;

  constructor(private readonly state: Pick<CappedState, 'capping' | 'readResidency'>) {}

  /** Reads the residency now, unless the last reading was too recent. */
  take(iterations: number): void {
    const now = Date.now();
    if (!this.state.capping || now - this.lastAt < Math.max(READING_INTERVAL_MS, this.costMs / READING_DUTY_CYCLE))
      return;
    // Its CPU time, not its wall time: on a loaded machine a reading waits for a core, at no cost to the job.
    const cpu = process.cpuUsage();
    const reading = this.state.readResidency(RESIDENCY_SAMPLE_FILES);
    this.costMs = Object.values(process.cpuUsage(cpu)).reduce((a, b) => a + b, 0) / 1000;
    this.lastAt = Date.now();
    if (reading) {
      this.all.push({ iterations, residentBytes: reading.residentBytes, exact: reading.exact });
      this.last = reading.residentBytes;
    }
  }
}

/**
 * One run of a cache point: the dataset evicted, then the job run with the cap holding the dataset's page cache at the
 * target (an LRU of the files it closed). The first epoch fills the cache and is not measured; the epochs after it are
 * the model's steady state. Residency readings (mincore, through the cap, sampled on large datasets) judge whether the
 * target held.
 */
const measureCachePoint: PointMeasurer<PointOf<'cache'>> = async (point, ctx, common, modeDir) => {
  const { input, dataset, throttle } = ctx;
  // Cache points run only where the source can cap its cache (cachePointObstacle refused the others).
  const cap = input.dataSource.cap;
  // Without a cap, capObstacle always says why.
  if (!cap) throw new UserError(capObstacle(input.dataSource)!, ExitCode.Environment);
  const cacheState = cap.state(point.cacheBytes);
  const readings = new ResidencyReadings(cacheState);
  const epochs = input.epochs;
  // The plan's iterations are the point's epochs, whole.
  const iterationsPerEpoch = ctx.planned.iterations / epochs;
  // A cell of whatif --matrix: the cache point at a CPU count too.
  const affinity = point.cpus !== undefined ? withCpus(point.cpus, input.profile.command, input.env.PATH) : null;
  const watch = affinityWatch(affinity);
  try {
    const result = await ctx.run({
      ...common,
      mode: 'cold',
      argv: affinity?.argv ?? common.argv,
      minIterations: ctx.planned.iterations,
      maxIterations: ctx.planned.maxIterations,
      modeDir,
      wrapArgv: (argv) => (throttle ? throttle.wrap(argv) : argv),
      cacheState,
      onJobStarted: watch.onJobStarted,
      onProgress: (progress) => {
        watch.onProgress(progress.iterations);
        readings.take(progress.iterations);
        // Past its epochs (its precision not yet reached) a point goes on: its epoch too.
        const epoch = Math.floor(progress.iterations / iterationsPerEpoch) + 1;
        ctx.hooks.onProgress?.(ctx.index, { ...progressOf(progress), epoch, epochs, residentBytes: readings.last });
      },
    });
    const pace = result.ranks.find((r) => r.rank === result.paceRank) ?? result.ranks[0];
    const steady = pace ? pace.iterations.slice(iterationsPerEpoch) : [];
    const summary = result.status === 'ok' ? summarizeIterations(steady, { workers: pace?.workers ?? null }) : null;
    const window = readings.all.filter((r) => r.iterations >= iterationsPerEpoch);
    const verdict = judgeResidency(
      window.map((r) => r.residentBytes),
      point.cacheBytes,
      dataset.bytes,
    );
    const held =
      verdict.meanBytes === null
        ? VALIDATE_TEXT.residencyUnmeasured
        : VALIDATE_TEXT.residency({
            ...verdict,
            minBytes: verdict.minBytes!,
            maxBytes: verdict.maxBytes!,
            meanBytes: verdict.meanBytes,
            sampled: window.some((r) => !r.exact),
          });
    const checked = watch.verdict();
    const note =
      VALIDATE_TEXT.cacheNote(point.cacheBytes, held, result.status, result.stopReason) +
      (affinity ? VALIDATE_TEXT.onCpus(affinity.cpus, affinityWords(checked)) : '');
    return pointOutcome(result, note, {
      // Its own summary: the epochs after the first, which fills the cache.
      summary,
      residentBytes: verdict.meanBytes,
      residency: verdict,
      affinity: checked,
      readBytesPerSample: readBytesPerSample(result, steady),
    });
  } finally {
    // Every reading beside the job's logs: how the cache went, when it did not hold.
    (input.sink ?? fileSink).writeText(
      join(modeDir, 'residency.jsonl'),
      readings.all.map((r) => JSON.stringify(r) + '\n').join(''),
    );
  }
};

/** A point's progress as the hooks see it, for a point with no epochs or residency to tell. */
function progressOf(progress: { iterations: number; elapsedSec: number }): PointProgress {
  return {
    iterations: progress.iterations,
    elapsedSec: progress.elapsedSec,
    epoch: null,
    epochs: null,
    residentBytes: null,
  };
}

/** What a point's note says of its CPU affinity: held on every thread, not held, or nothing when unchecked. */
function affinityWords(checked: AffinityVerdict | null): string {
  if (checked === null) return '';
  return checked.held
    ? VALIDATE_TEXT.affinityHeld(checked.threads)
    : VALIDATE_TEXT.affinityNotHeld(checked.outside, checked.threads, checked.example);
}

/** How each kind of point is measured (its words, folder and scenario: point-kinds.ts). */
const MEASURERS: { [K in PointKindName]: PointMeasurer<PointOf<K>> } = {
  control: measureSettingsPoint,
  cache: measureCachePoint,
  cpus: measureSettingsPoint,
  workers: measureSettingsPoint,
  bandwidth: measureBandwidthPoint,
  latency: measureLatencyPoint,
  write: measureWritePoint,
};
