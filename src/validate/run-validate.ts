import { join } from 'node:path';
import { summarizeIterations } from '../analysis/summarize.js';
import { fetchedSeriesOf, windowRates } from '../profile/window-rates.js';
import { capObstacle, throttleObstacle, type DataSource, type Throttle } from '../profile/data-sources/data-source.js';
import { runMode } from '../profile/run-mode.js';
import { outputsEnv, outputsNote } from '../profile/job-outputs.js';
import {
  jobRunner,
  pauseReclaim,
  sharedRunSettings,
  startThrottle,
  throttleReads,
  workersNotApplied,
  type ModeRunner,
  type RunRequest,
} from '../profile/run-setup.js';
import { Interrupts } from '../profile/interrupts.js';
import type { Iteration, Profile, ModeResult } from '../schema/profile.js';
import { threadAffinities, withCpus } from '../system/cgroups/affinity.js';
import type { Dataset } from '../system/dataset/dataset.js';
import {
  baseScenario,
  fitModel,
  predict,
  type FittedModel,
  type NotEnoughData,
  type Scenario,
} from '../whatif/model.js';
import { ExitCode, UserError } from '../errors.js';
import { judgeAffinity, judgeResidency, type AffinityVerdict } from './held.js';
import { planValidation, type PlannedPoint } from './plan.js';
import { pointKind, pointScenario, type PointKindName, type PointOf, type ValidationPoint } from './point-kinds.js';
import { pointOutcome, type PointOutcome } from './point-outcome.js';
import { ENV } from '../schema/events.js';
import { formatRate } from '../units.js';
import { requestedPoints, type PointRequest } from './points.js';
import { cachePointObstacle } from './cache-obstacle.js';
import { anchorToControl, errorSummary, pointStatus, type ValidationReport, type ValidationResult } from './results.js';
import { VALIDATE_TEXT } from './validate-text.js';
import { REDACTED } from '../store/redact.js';
import { fileSink, type ArtifactSink } from '../store/artifact-sink.js';
import { CONTROL_MIN_ITERATIONS } from '../profile/run-defaults.js';
import { startWriteThrottle, writeThrottleObstacle, type WriteThrottle } from '../system/cgroups/write-throttle.js';
import {
  measuredWrites,
  stallWithinTolerance,
  writeHeld,
  writePrediction,
  type WritePrediction,
} from './write-point.js';

export type { ValidationPoint } from './point-kinds.js';
export type { ValidationReport, ValidationResult } from './results.js';

/** Live state of a running point. */
export interface PointProgress {
  /** Iterations so far (the pace-setting rank's). */
  iterations: number;
  /** Seconds since the job started. */
  elapsedSec: number;
  /** Cache points: the epoch running (1-based) and the epochs planned; null otherwise. */
  epoch: number | null;
  epochs: number | null;
  /** Cache points: the last residency reading, bytes; null otherwise or before the first. */
  residentBytes: number | null;
}

/** What validate is asked to do, parsed and checked. */
export interface ValidateInput {
  /** The profile whose job is run again and whose model is checked. */
  profile: Profile;
  /** Cache sizes and CPU counts to run at, and whether the control runs first. */
  request: PointRequest;
  /** Epochs each cache point runs; the first (cold) is not measured. */
  epochs: number;
  /** Control and CPU points stop when the 95% CI of the iteration time is this tight (relative)... */
  precision: number;
  /** ...or after this many iterations. */
  maxIterations: number;
  /** Where the job's samples come from: the profile's data (LocalFilesSource; FakeDataSource in tests). */
  dataSource: DataSource;
  /** Working folder of the job. */
  cwd: string;
  /**
   * The CLI's environment: the job inherits it; its PATH finds taskset, its DSA_CGROUP_PARENT names a delegated cgroup.
   */
  env: NodeJS.ProcessEnv;
  /** Folder for the points' events, logs and residency readings; created here. */
  workDir: string;
  /** What makes that folder and writes the readings; the disk unless a test passes a MemorySink. */
  sink?: ArtifactSink;
  /** Seconds before a point's job is stopped whatever it reported. */
  timeoutSec: number;
  /**
   * Pause DAMON's proactive reclaim while the points run, as profile does
   * (default true; validate --keep-reclaim sets false): the points then run
   * on the machine the profile measured.
   */
  pauseReclaim?: boolean;
  /**
   * Runs one point's job; the real runMode unless a test passes a deterministic fake (as ProfileRunInput.modeRunner).
   */
  modeRunner?: ModeRunner;
  /**
   * Holds the job's writes for the write points; the real cgroup throttle (system/cgroups/write-throttle.ts) unless a
   * test passes a fake.
   */
  writeThrottle?: WriteThrottler;
}

/** Sets up the write points' throttle, and says why it cannot. */
export interface WriteThrottler {
  /** Why writes cannot be held here, or null when they can. */
  obstacle(env: NodeJS.ProcessEnv): string | null;
  /** Holds the writes of the jobs it wraps to `bytesPerSec`; `name` tells its groups apart. */
  start(bytesPerSec: number, name: string, env: NodeJS.ProcessEnv): WriteThrottle;
}

const cgroupWriteThrottle: WriteThrottler = {
  obstacle: (env) => writeThrottleObstacle(env),
  start: (rate, name, env) => startWriteThrottle(rate, name, env),
};

/** What validate tells its caller while it runs. */
export interface ValidateHooks {
  /** Cache points cannot run on this machine, for this reason: they are left out (the report's notRun). */
  onCachePointsSkipped?: (reason: string) => void;
  /** Something about the machine the points run on, said before they start. */
  onWarning?: (message: string) => void;
  /** What was done about the job's outputs (its checkpoints, its trackers), said before the first point. */
  onNote?: (message: string) => void;
  /** The points to run with their estimated times, before the first starts. */
  onPlan?: (plan: PlannedPoint[]) => void;
  /** Called when a point starts. */
  onPoint?: (point: ValidationPoint, index: number) => void;
  /** Called when a point has run, with its result. */
  onPointDone?: (result: ValidationResult, index: number) => void;
  /** Called about every poll while a point runs. */
  onProgress?: (index: number, progress: PointProgress) => void;
  /** Registers a SIGINT/SIGTERM handler; returns its remover. */
  onSignal: (handler: () => void) => () => void;
}

/** A validate run's report, with the plan it followed. */
export interface ValidationRun {
  /** Each point's prediction against its measurement, and the errors over them. */
  report: ValidationReport;
  /** The points it set out to run, in order, with their estimated times. */
  plan: PlannedPoint[];
}

/**
 * Runs the profiled job again at other cache sizes (a cap holds the dataset's
 * page cache at each size: src/system/keepers/cache-cap.ts) and CPU counts (affinity),
 * and sets what it measures beside what the what-if model predicts. The model
 * is fitted on the profile alone, so each point is a prediction of a run it
 * has not seen. Cache points are left out where this machine cannot cap the
 * page cache (cache-obstacle.ts); the plan is announced before the first
 * point starts. A profile the model cannot fit is answered with NotEnoughData
 * before anything runs.
 */
export async function runValidation(
  input: ValidateInput,
  hooks: ValidateHooks,
): Promise<ValidationRun | NotEnoughData> {
  const { profile } = input;
  // A secret taken out of the command cannot be run again.
  if (profile.command.some((arg) => arg.includes(REDACTED)))
    throw new UserError(VALIDATE_TEXT.redactedCommand, ExitCode.MissingInput);
  // Fitted once, on the profile alone (its CPU sweep included, when it has one): points, plan and predictions rest on
  // it.
  // The cap holds the page cache as an LRU of the files the job closed (cache-cap.ts): its points are that policy's to
  // predict, not the kernel's.
  const fit = fitModel(profile, { pageCacheModel: VALIDATE_CAP_POLICY });
  if (fit.kind === 'not-enough-data') return fit;
  const { model } = fit;
  const asked = requestedPoints(profile, model, input.request);
  const obstacle = asked.some((p) => p.kind === 'cache')
    ? cachePointObstacle(profile, input.env, input.dataSource)
    : null;
  const notRun: ValidationPoint[] = obstacle ? asked.filter((p) => p.kind === 'cache') : [];
  if (obstacle) hooks.onCachePointsSkipped?.(obstacle);
  const points = asked.filter((p) => !notRun.includes(p));
  if (obstacle && !points.some((p) => p.kind !== 'control')) {
    throw new UserError(VALIDATE_TEXT.nothingToValidate(obstacle), ExitCode.Environment);
  }
  // Known from the profile alone: refused before the data is listed.
  const latencyBlocker = latencyObstacle(profile, points, input.dataSource);
  if (latencyBlocker !== null) throw new UserError(VALIDATE_TEXT.latencyRefused(latencyBlocker), ExitCode.Environment);
  const dataset = await input.dataSource.list();
  const asksBandwidth = points.some((p) => p.kind === 'bandwidth');
  const bandwidthBlocker = asksBandwidth ? throttleObstacle(input.dataSource, input.env) : null;
  if (bandwidthBlocker !== null) {
    await input.dataSource.close().catch(() => undefined);
    throw new UserError(VALIDATE_TEXT.noThrottle(bandwidthBlocker), ExitCode.Environment);
  }
  const writeBlocker = points.some((p) => p.kind === 'write')
    ? (input.writeThrottle ?? cgroupWriteThrottle).obstacle(input.env)
    : null;
  if (writeBlocker !== null) {
    await input.dataSource.close().catch(() => undefined);
    throw new UserError(VALIDATE_TEXT.noWriteThrottle(writeBlocker), ExitCode.Environment);
  }
  // Storage as the profile saw it: its cold mode's throttle, for the cache points (the others run cached);
  // refused before any point runs where this data cannot be throttled, as profile refuses.
  const throttleBps = points.some((p) => p.kind === 'cache') ? profile.options.storageBwBytesPerSec : null;
  let throttle: Throttle | null = null;
  try {
    throttle = await startThrottle(input.dataSource, dataset, throttleBps, `validate-${process.pid}`, input.env);
    const plan = planValidation(profile, model, points, {
      epochs: input.epochs,
      maxIterations: input.maxIterations,
      datasetFiles: profile.dataset.files,
      samplesPerIter: profile.modes.cached?.summary?.samplesPerIter ?? 1,
    });
    hooks.onPlan?.(plan);
    (input.sink ?? fileSink).makeFolder(input.workDir);
    // The profile ran with DAMON's reclaim paused; so do its points (its scanning takes CPU, its pageout the cache).
    const reclaim = pauseReclaim(input.pauseReclaim !== false, 'validate', input.env);
    for (const warning of reclaim.warnings) hooks.onWarning?.(warning);
    try {
      return { report: await runPoints(input, hooks, model, points, notRun, { dataset, throttle }), plan };
    } finally {
      reclaim.restore();
    }
  } finally {
    await throttle?.remove().catch(() => undefined);
    // The source's proxy and cache (remote data) outlive no validate.
    await input.dataSource.close().catch(() => undefined);
  }
}

/** Runs the points one after another; a Ctrl-C keeps the ones completed before it. */
async function runPoints(
  input: ValidateInput,
  hooks: ValidateHooks,
  model: FittedModel,
  points: ValidationPoint[],
  notRun: ValidationPoint[],
  { dataset, throttle }: { dataset: Dataset; throttle: Throttle | null },
): Promise<ValidationReport> {
  const { profile } = input;
  const base = baseScenario(model);
  const samplesPerIter = profile.modes.cached?.summary?.samplesPerIter ?? 1;
  const interrupts = new Interrupts(hooks.onSignal);
  // Its runs write nothing of the user's, as the profile's did not: checkpoints to scratch files, trackers off.
  const scratchDir = join(input.workDir, 'scratch');
  hooks.onNote?.(outputsNote(false, scratchDir, false));
  const jobInput = { ...input, env: { ...input.env, ...outputsEnv(false, scratchDir) } };
  const run = jobRunner(sharedRunSettings(jobInput, dataset), input.modeRunner ?? runMode, interrupts);
  const results: ValidationResult[] = [];
  let anchoredModel: FittedModel | null = null;
  try {
    for (const [index, point] of points.entries()) {
      if (interrupts.interrupted) break;
      hooks.onPoint?.(point, index);
      const scenario: Scenario = pointScenario(base, point, dataset.bytes);
      // Known before the run: a write point's prediction holds no measurement of it (its cache is the whole dataset).
      const writes =
        point.kind === 'write' ? writePrediction(profile, predict(model, scenario), point.bytesPerSec) : null;
      const measured = await measurePoint(point, {
        input,
        hooks,
        dataset,
        samplesPerIter,
        run,
        throttle,
        index,
        writePrediction: writes,
      });
      // A point cut short by Ctrl-C is not a measurement; the ones before it are kept.
      if (interrupts.interrupted) break;
      // Predict at the cache the job really had, which the cap holds near, not exactly at, the target.
      const asRun = measured.residentBytes === null ? scenario : { ...scenario, cacheBytes: measured.residentBytes };
      const prediction = predict(model, asRun);
      // A write point's iterations carry the saves at its rate (whatif --write-bw), on top of the steady pace.
      const predicted = writes?.samplesPerSec ?? prediction.samplesPerSec;
      const missRatio =
        measured.readBytesPerSample === null
          ? null
          : measured.readBytesPerSample / (model.bytesPerSample * model.readAmplification);
      const measuredHit = point.kind === 'cache' && missRatio !== null ? Math.min(1, Math.max(0, 1 - missRatio)) : null;
      const anchoredPace = anchoredModel ? predict(anchoredModel, asRun) : null;
      const anchoredRate =
        anchoredPace && point.kind === 'write'
          ? (writePrediction(profile, anchoredPace, point.bytesPerSec)?.samplesPerSec ?? null)
          : (anchoredPace?.samplesPerSec ?? null);
      const rate = measured.summary ? measured.summary.samplesPerSec * measured.ranks : null;
      const status = pointStatus(rate, measured.residency, measured.affinity, measured.settingHeld);
      if (point.kind === 'control' && rate) anchoredModel = anchorToControl(model, predicted / rate);
      const halfWidth =
        measured.summary?.iterMs.halfWidth != null && rate !== null
          ? (rate * measured.summary.iterMs.halfWidth) / measured.summary.iterMs.mean
          : null;
      results.push({
        point,
        status,
        residency: measured.residency,
        affinity: measured.affinity,
        predictedSamplesPerSec: predicted,
        residentBytes: measured.residentBytes,
        predictedHitRatio: point.kind === 'cache' ? prediction.steadyHitRatio : null,
        measuredHitRatio: measuredHit,
        atMeasuredHitSamplesPerSec:
          measuredHit === null ? null : predict(withHitRatio(model, measuredHit), asRun).samplesPerSec,
        measuredSamplesPerSec: rate,
        measuredHalfWidth: halfWidth,
        relativeError: rate ? (predicted - rate) / rate : null,
        anchoredSamplesPerSec: anchoredRate,
        anchoredError: rate && anchoredRate ? (anchoredRate - rate) / rate : null,
        note: measured.note,
        failureTail: measured.failureTail,
        // Cold points: the job's first batch, nothing cached, against the model's.
        ...(measured.firstBatchSec !== null && prediction.firstBatchSec !== undefined
          ? { firstBatchSec: { predicted: prediction.firstBatchSec, measured: measured.firstBatchSec } }
          : {}),
        ...(measured.checkpoint ? { checkpoint: measured.checkpoint } : {}),
      });
      hooks.onPointDone?.(results[results.length - 1], index);
    }
  } finally {
    interrupts.dispose();
  }
  return {
    results,
    interrupted: interrupts.interrupted,
    ...errorSummary(results),
    modelCaveats: model.caveats,
    overlapMeasured: model.overlapMeasured,
    notRun,
  };
}

interface PointContext {
  input: ValidateInput;
  hooks: ValidateHooks;
  dataset: Dataset;
  samplesPerIter: number;
  /** Runs the job once with the shared settings, under the user's interrupts. */
  run: (request: RunRequest) => Promise<ModeResult>;
  /** The profile's storage throttle, for the cache points; null without one. */
  throttle: Throttle | null;
  index: number;
  /** Write points: the model's answer at the point's rate; null elsewhere. */
  writePrediction: WritePrediction | null;
}

/** What every point's run asks for beyond the shared settings: the control's budget and no wrapping. */
type PointRun = Omit<RunRequest, 'mode' | 'cacheState' | 'modeDir'>;

/** Measures one point of a kind: sets up what it holds, runs the job and builds its outcome. */
type PointMeasurer<P extends ValidationPoint> = (
  point: P,
  ctx: PointContext,
  common: PointRun,
  modeDir: string,
) => Promise<PointOutcome>;

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

async function measurePoint(point: ValidationPoint, ctx: PointContext): Promise<PointOutcome> {
  const { input } = ctx;
  const modeDir = join(input.workDir, `point-${ctx.index + 1}-${pointKind(point).folderLabel(point)}`);
  const common: PointRun = {
    argv: input.profile.command,
    precision: input.precision,
    minIterations: CONTROL_MIN_ITERATIONS,
    maxIterations: Math.max(CONTROL_MIN_ITERATIONS, input.maxIterations),
    wrapArgv: (argv) => argv,
  };
  // The table pairs each kind with its own measurer; TypeScript cannot follow that through a union.
  const measure = MEASURERS[point.kind] as PointMeasurer<ValidationPoint>;
  return measure(point, ctx, common, modeDir);
}

/**
 * A write point: the cached mode (the data in memory, so the saves are what
 * the throttle changes) with the job's writes to every disk held to the
 * point's rate, set up for this run alone; its saves' own events give its
 * checkpoint stall, by the profile's arithmetic (checkpointStall).
 */
async function measureWritePoint(
  point: PointOf<'write'>,
  ctx: PointContext,
  common: PointRun,
  modeDir: string,
): Promise<PointOutcome> {
  const { input } = ctx;
  const prediction = ctx.writePrediction!;
  const held = (input.writeThrottle ?? cgroupWriteThrottle).start(
    point.bytesPerSec,
    `validate-${process.pid}-write-${ctx.index}`,
    input.env,
  );
  let result: ModeResult;
  try {
    result = await ctx.run({
      ...common,
      mode: 'cached',
      modeDir,
      cacheState: input.dataSource.modeState,
      wrapArgv: held.wrap,
      onProgress: (progress) =>
        ctx.hooks.onProgress?.(ctx.index, {
          iterations: progress.iterations,
          elapsedSec: progress.elapsedSec,
          epoch: null,
          epochs: null,
          residentBytes: null,
        }),
    });
  } finally {
    await held.remove().catch(() => undefined);
  }
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
}

/** The median time to a first byte the profile's cold mode measured, s; null where it saw no requests. */
function profiledLatencySec(profile: Profile): number | null {
  const firstByte = profile.modes.cold?.network?.firstByteMs;
  return firstByte ? firstByte.p50 / 1000 : null;
}

/**
 * Why the latency points cannot run, or null: no requests were seen, the data's requests cannot be delayed, or one asks
 * for less than was measured.
 */
function latencyObstacle(profile: Profile, points: readonly ValidationPoint[], source: DataSource): string | null {
  const asked = points.flatMap((p) => (p.kind === 'latency' ? [p.latencySec] : []));
  if (asked.length === 0) return null;
  const profiled = profiledLatencySec(profile);
  if (profiled === null) return VALIDATE_TEXT.noLatency;
  if (!source.delayRequests) return source.whyNot?.delayRequests ?? VALIDATE_TEXT.noLatency;
  const below = asked.find((sec) => sec < profiled);
  return below === undefined ? null : VALIDATE_TEXT.latencyBelow(below * 1000, profiled * 1000);
}

/**
 * A latency point: the cold mode with every request to the origin held at
 * the metering proxy for the asked time less the profiled one, so its first
 * byte comes when a store that far away would send it.
 */
function measureLatencyPoint(
  point: PointOf<'latency'>,
  ctx: PointContext,
  common: PointRun,
  modeDir: string,
): Promise<PointOutcome> {
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
}

/**
 * A bandwidth point: the cold mode with the data's reads held to the point's
 * bandwidth (a storage throttle, or for remote data the metering proxy's
 * cap), set up for this run alone.
 */
/** The name of a bandwidth point's throttle (its cgroup): this process's, apart from its other points'. */
const pointThrottleName = (index: number) => `validate-${process.pid}-bw-${index}`;

function measureBandwidthPoint(
  point: PointOf<'bandwidth'>,
  ctx: PointContext,
  common: PointRun,
  modeDir: string,
): Promise<PointOutcome> {
  const { input } = ctx;
  return measureColdPoint(
    ctx,
    common,
    modeDir,
    () => throttleReads(input.dataSource, ctx.dataset, point.bytesPerSec, pointThrottleName(ctx.index), input.env),
    (result, unproven) =>
      VALIDATE_TEXT.coldNote(formatRate(point.bytesPerSec), result.status, result.stopReason, unproven),
  );
}

/**
 * The cold mode under a hold set up for this run alone (a throttle, delayed requests), removed however the run ends.
 */
async function measureColdPoint(
  ctx: PointContext,
  common: PointRun,
  modeDir: string,
  hold: () => Promise<Throttle>,
  noteOf: (result: ModeResult, unproven: string) => string,
): Promise<PointOutcome> {
  const { input } = ctx;
  const held = await hold();
  let result: ModeResult;
  try {
    result = await ctx.run({
      ...common,
      mode: 'cold',
      modeDir,
      cacheState: input.dataSource.modeState,
      wrapArgv: held.wrap,
    });
  } finally {
    await held.remove().catch(() => undefined);
  }
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

/**
 * A control, CPU or loader-workers point: the cached mode at the point's
 * setting, then whether the setting held (every thread inside the affinity
 * mask; the job ran the workers asked).
 */
async function measureSettingsPoint(
  point: PointOf<'control' | 'cpus' | 'workers'>,
  ctx: PointContext,
  common: PointRun,
  modeDir: string,
): Promise<PointOutcome> {
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
      ctx.hooks.onProgress?.(ctx.index, {
        iterations: progress.iterations,
        elapsedSec: progress.elapsedSec,
        epoch: null,
        epochs: null,
        residentBytes: null,
      });
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
}

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

/** The policy validate's cache points run under: its cap evicts the least recently closed files. */
export const VALIDATE_CAP_POLICY = {
  model: 'exact-lru' as const,
  why: "validate's cap evicts the least recently closed files",
};

/** The model with every cache size hitting `hitRatio`: the rest of the model at a hit ratio measured, not simulated. */
function withHitRatio(model: FittedModel, hitRatio: number): FittedModel {
  return { ...model, pageCache: { ...model.pageCache, steady: () => hitRatio } };
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
/** Largest share of the time the readings may take: a slow reading spaces the next ones out. */
const READING_DUTY_CYCLE = 0.02;

/**
 * One run of a cache point: the dataset evicted, then the job run with the
 * cap holding the dataset's page cache at the target (an LRU of the files it
 * closed). The first epoch fills the cache and is not measured; the epochs
 * after it are the model's steady state. Residency readings (mincore, through
 * the cap, sampled on large datasets) judge whether the target held.
 */
async function measureCachePoint(
  point: PointOf<'cache'>,
  ctx: PointContext,
  common: PointRun,
  modeDir: string,
): Promise<PointOutcome> {
  const { input, dataset, throttle } = ctx;
  const iterationsPerEpoch = Math.ceil(dataset.files.length / ctx.samplesPerIter);
  // Cache points run only where the source can cap its cache (cachePointObstacle refused the others).
  const cap = input.dataSource.cap;
  // Without a cap, capObstacle always says why.
  if (!cap) throw new UserError(capObstacle(input.dataSource)!, ExitCode.Environment);
  const cacheState = cap.state(point.cacheBytes);
  const readings: { iterations: number; residentBytes: number; exact: boolean }[] = [];
  let lastReadingAt = 0;
  let readingCostMs = 0;
  let lastResident: number | null = null;
  const epochs = input.epochs;
  // A cell of whatif --matrix: the cache point at a CPU count too.
  const affinity = point.cpus !== undefined ? withCpus(point.cpus, input.profile.command, input.env.PATH) : null;
  const watch = affinityWatch(affinity);
  try {
    const result = await ctx.run({
      ...common,
      mode: 'cold',
      argv: affinity?.argv ?? common.argv,
      minIterations: iterationsPerEpoch * epochs,
      maxIterations: iterationsPerEpoch * epochs * 3,
      modeDir,
      wrapArgv: (argv) => (throttle ? throttle.wrap(argv) : argv),
      cacheState,
      onJobStarted: watch.onJobStarted,
      onProgress: (progress) => {
        watch.onProgress(progress.iterations);
        const now = Date.now();
        if (
          cacheState.capping &&
          now - lastReadingAt >= Math.max(READING_INTERVAL_MS, readingCostMs / READING_DUTY_CYCLE)
        ) {
          const reading = cacheState.readResidency(RESIDENCY_SAMPLE_FILES);
          readingCostMs = Date.now() - now;
          lastReadingAt = Date.now();
          if (reading) {
            readings.push({
              iterations: progress.iterations,
              residentBytes: reading.residentBytes,
              exact: reading.exact,
            });
            lastResident = reading.residentBytes;
          }
        }
        const epoch = Math.min(epochs, Math.floor(progress.iterations / iterationsPerEpoch) + 1);
        ctx.hooks.onProgress?.(ctx.index, {
          iterations: progress.iterations,
          elapsedSec: progress.elapsedSec,
          epoch,
          epochs,
          residentBytes: lastResident,
        });
      },
    });
    const pace = result.ranks.find((r) => r.rank === result.paceRank) ?? result.ranks[0];
    const steady = pace ? pace.iterations.slice(iterationsPerEpoch) : [];
    const summary = result.status === 'ok' ? summarizeIterations(steady, { workers: pace?.workers ?? null }) : null;
    const window = readings.filter((r) => r.iterations >= iterationsPerEpoch);
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
    const applied = affinityWords(checked);
    const note =
      VALIDATE_TEXT.cacheNote(point.cacheBytes, held, result.status, result.stopReason) +
      (affinity ? VALIDATE_TEXT.onCpus(affinity.cpus, applied) : '');
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
      readings.map((r) => JSON.stringify(r) + '\n').join(''),
    );
  }
}

/** What a point's note says of its CPU affinity: held on every thread, not held, or nothing when unchecked. */
function affinityWords(checked: AffinityVerdict | null): string {
  if (checked === null) return '';
  return checked.held
    ? VALIDATE_TEXT.affinityHeld(checked.threads)
    : VALIDATE_TEXT.affinityNotHeld(checked.outside, checked.threads, checked.example);
}
