import { join } from 'node:path';
import { throttleObstacle, type Throttle } from '../profile/data-sources/throttle.js';
import { runMode } from '../profile/run-mode.js';
import { outputsEnv, outputsNote } from '../profile/job-outputs.js';
import { jobRunner, pauseReclaim, sharedRunSettings, startThrottle, type ModeRunner } from '../profile/run-setup.js';
import { Interrupts } from '../profile/interrupts.js';
import { isAbort } from '../system/network/deadlines.js';
import type { Profile } from '../schema/profile.js';
import type { OpenedSource } from '../profile/data-sources/data-source.js';
import type { DownloadProgress } from '../profile/data-sources/source-run.js';
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
import { planValidation, type PlannedPoint } from './plan.js';
import { pointScenario, type ValidationPoint } from './point-kinds.js';
import type { PointOutcome } from './point-outcome.js';
import { requestedPoints, type PointRequest } from './points.js';
import { cachePointObstacle } from './cache-obstacle.js';
import { anchorToControl, errorSummary, pointStatus, type ValidationReport, type ValidationResult } from './results.js';
import { VALIDATE_TEXT } from './validate-text.js';
import { REDACTED } from '../store/redact.js';
import { fileSink, type ArtifactSink } from '../store/artifact-sink.js';
import type { WriteThrottle } from '../system/cgroups/write-throttle.js';
import { writePrediction, type WritePrediction } from './write-point.js';
import { cgroupWriteThrottle, latencyObstacle, measurePoint } from './measure-point.js';

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
  dataSource: OpenedSource;
  /** Working folder of the job. */
  cwd: string;
  /** The CLI's environment, the job's too: its PATH finds taskset, its DSA_CGROUP_PARENT names a delegated cgroup. */
  env: NodeJS.ProcessEnv;
  /** Folder for the points' events, logs and residency readings; created here. */
  workDir: string;
  /** What makes that folder and writes the readings; the disk unless a test passes a MemorySink. */
  sink?: ArtifactSink;
  /** Seconds before a point's job is stopped whatever it reported. */
  timeoutSec: number;
  /**
   * Pause DAMON's proactive reclaim while the points run, as profile does (default true; validate --keep-reclaim sets
   * false): the points then run on the machine the profile measured.
   */
  pauseReclaim?: boolean;
  /** Runs one point's job; the real runMode unless a test passes a fake (as ProfileRunInput.modeRunner). */
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
  /** Told how a download of remote data comes on (the local copy a point runs cached on), about once a second. */
  onDownload?: (progress: DownloadProgress) => void;
  /** Registers a SIGINT/SIGTERM handler; returns its remover. */
  onSignal: (handler: (signal?: NodeJS.Signals) => void) => () => void;
}

/** A validate run's report, with the plan it followed. */
export interface ValidationRun {
  /** Each point's prediction against its measurement, and the errors over them. */
  report: ValidationReport;
  /** The points it set out to run, in order, with their estimated times. */
  plan: PlannedPoint[];
}

/**
 * Runs the profiled job again at other cache sizes (a cap holds the dataset's page cache at each size:
 * src/system/keepers/cache-cap.ts) and CPU counts (affinity), and sets what it measures beside what the what-if model
 * predicts. The model is fitted on the profile alone, so each point is a prediction of a run it has not seen. Cache
 * points are left out where this machine cannot cap the page cache (cache-obstacle.ts); the plan is announced before
 * the first point starts. A profile the model cannot fit is answered with NotEnoughData before anything runs.
 */
export async function runValidation(
  input: ValidateInput,
  hooks: ValidateHooks,
): Promise<ValidationRun | NotEnoughData> {
  const { profile } = input;
  // A secret taken out of the command cannot be run again.
  if (profile.command.some((arg) => arg.includes(REDACTED)))
    throw new UserError(VALIDATE_TEXT.redactedCommand, ExitCode.MissingInput);
  // A stalled block's figures are no measurement (analysis/stalls.ts): there is nothing to hold the model to.
  const stalled = Object.values(profile.modes).find((m) => m?.stalled);
  if (stalled?.stalled)
    throw new UserError(VALIDATE_TEXT.stalled(stalled.mode, stalled.stalled.text), ExitCode.MissingInput);
  // Fitted once, on the profile alone (its CPU sweep included, when it has one): points, plan and predictions rest on
  // it. The cap holds the page cache as an LRU of the files the job closed (cache-cap.ts): its points are that policy's
  // to predict, not the kernel's.
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
  // From the listing on, Ctrl-C stops what runs (a point's job, a download of remote data), as it does in profile.
  const interrupts = new Interrupts(hooks.onSignal);
  input.dataSource.bindRun?.({
    signal: interrupts.signal,
    ...(hooks.onDownload ? { onDownload: hooks.onDownload } : {}),
  });
  try {
    return await validatePoints(input, hooks, { model, points, notRun, interrupts });
  } catch (error) {
    // Interrupted before any point (the listing, the throttle's set-up): an interrupted run with nothing measured.
    if (interrupts.interrupted && isAbort(error)) return { report: reportOf(model, [], true, notRun), plan: [] };
    throw error;
  } finally {
    interrupts.dispose();
  }
}

/** What validatePoints works from: the fitted model, the points asked and left out, the user's interrupts. */
interface PointsContext {
  model: FittedModel;
  points: ValidationPoint[];
  notRun: ValidationPoint[];
  interrupts: Interrupts;
}

/** The points of listed data; the data source is closed after, however they end (a failed or stopped listing too). */
async function validatePoints(
  input: ValidateInput,
  hooks: ValidateHooks,
  context: PointsContext,
): Promise<ValidationRun> {
  try {
    return await pointsOfListedData(input, hooks, context);
  } finally {
    // The source's proxy and cache (remote data) outlive no validate.
    await input.dataSource.close().catch(() => undefined);
  }
}

/** Lists the data, sets up its throttle, plans and runs the points; the throttle is removed after. */
async function pointsOfListedData(
  input: ValidateInput,
  hooks: ValidateHooks,
  { model, points, notRun, interrupts }: PointsContext,
): Promise<ValidationRun> {
  const { profile } = input;
  const dataset = await input.dataSource.list();
  const asksBandwidth = points.some((p) => p.kind === 'bandwidth');
  const bandwidthBlocker = asksBandwidth ? throttleObstacle(input.dataSource, input.env) : null;
  if (bandwidthBlocker !== null) throw new UserError(VALIDATE_TEXT.noThrottle(bandwidthBlocker), ExitCode.Environment);
  const writeBlocker = points.some((p) => p.kind === 'write')
    ? (input.writeThrottle ?? cgroupWriteThrottle).obstacle(input.env)
    : null;
  if (writeBlocker !== null) throw new UserError(VALIDATE_TEXT.noWriteThrottle(writeBlocker), ExitCode.Environment);
  // Storage as the profile saw it: its cold mode's throttle, for the cache points (the others run cached); refused
  // before any point runs where this data cannot be throttled, as profile refuses.
  const throttleBps = points.some((p) => p.kind === 'cache') ? profile.options.storageBwBytesPerSec : null;
  let throttle: Throttle | null = null;
  try {
    throttle = await startThrottle(input.dataSource, dataset, throttleBps, `validate-${process.pid}`, input.env);
    const plan = planValidation(profile, model, points, {
      epochs: input.epochs,
      maxIterations: input.maxIterations,
      datasetFiles: dataset.files.length,
      samplesPerIter: profile.modes.cached?.summary?.samplesPerIter ?? 1,
    });
    hooks.onPlan?.(plan);
    (input.sink ?? fileSink).makeFolder(input.workDir);
    // The profile ran with DAMON's reclaim paused; so do its points (its scanning takes CPU, its pageout the cache).
    const reclaim = pauseReclaim(input.pauseReclaim !== false, 'validate', input.env);
    for (const warning of reclaim.warnings) hooks.onWarning?.(warning);
    try {
      return {
        report: await runPoints(input, hooks, model, points, notRun, { dataset, throttle, interrupts, plan }),
        plan,
      };
    } finally {
      reclaim.restore();
    }
  } finally {
    await throttle?.remove().catch(() => undefined);
  }
}

/** What the points run on and under: the listed data, its throttle, the user's interrupts, and the plan shown. */
interface RunningPoints {
  dataset: Dataset;
  throttle: Throttle | null;
  interrupts: Interrupts;
  plan: PlannedPoint[];
}

/** Runs the points one after another; a Ctrl-C keeps the ones completed before it. */
async function runPoints(
  input: ValidateInput,
  hooks: ValidateHooks,
  model: FittedModel,
  points: ValidationPoint[],
  notRun: ValidationPoint[],
  { dataset, throttle, interrupts, plan }: RunningPoints,
): Promise<ValidationReport> {
  const { profile } = input;
  const base = baseScenario(model);
  // Its runs write nothing of the user's, as the profile's did not: checkpoints to scratch files, trackers off.
  const scratchDir = join(input.workDir, 'scratch');
  hooks.onNote?.(outputsNote(false, scratchDir, false));
  const jobInput = { ...input, env: { ...input.env, ...outputsEnv(false, scratchDir) } };
  const run = jobRunner(sharedRunSettings(jobInput, dataset), input.modeRunner ?? runMode, interrupts);
  const results: ValidationResult[] = [];
  let anchoredModel: FittedModel | null = null;
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
      planned: plan[index],
      run,
      throttle,
      index,
      writePrediction: writes,
    }).catch((error: unknown) => {
      // A download the interrupt ended: the point is cut short, as a job the interrupt stopped is.
      if (interrupts.interrupted && isAbort(error)) return null;
      throw error;
    });
    // A point cut short by Ctrl-C is not a measurement; the ones before it are kept.
    if (measured === null || interrupts.interrupted) break;
    const result = pointResult(profile, { model, anchoredModel }, point, scenario, writes, measured);
    if (point.kind === 'control' && result.measuredSamplesPerSec)
      anchoredModel = anchorToControl(model, result.predictedSamplesPerSec / result.measuredSamplesPerSec);
    results.push(result);
    hooks.onPointDone?.(result, index);
  }
  return reportOf(model, results, interrupts.interrupted, notRun);
}

/** The report of the points run (none for a run interrupted before its first). */
function reportOf(
  model: FittedModel,
  results: ValidationResult[],
  interrupted: boolean,
  notRun: ValidationPoint[],
): ValidationReport {
  return {
    results,
    interrupted,
    ...errorSummary(results),
    modelCaveats: model.caveats,
    overlapMeasured: model.overlapMeasured,
    notRun,
  };
}

/**
 * A point's measurement beside the model's prediction at the cache the job really had (which the cap holds near, not
 * exactly at, the target), and beside the model anchored to the control run once there is one.
 */
function pointResult(
  profile: Profile,
  { model, anchoredModel }: { model: FittedModel; anchoredModel: FittedModel | null },
  point: ValidationPoint,
  scenario: Scenario,
  writes: WritePrediction | null,
  measured: PointOutcome,
): ValidationResult {
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
  const halfWidth =
    measured.summary?.iterMs.halfWidth != null && rate !== null
      ? (rate * measured.summary.iterMs.halfWidth) / measured.summary.iterMs.mean
      : null;
  return {
    point,
    status: pointStatus(rate, measured.residency, measured.affinity, measured.settingHeld),
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
