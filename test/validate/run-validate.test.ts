/**
 * validate through its seams: a fake data source (made-up dataset, fake
 * cache states and throttle) and a deterministic fake runner whose job runs
 * at rates a test sets. Nothing is read from the dataset, no page cache is
 * touched and no job runs; what is left is validate's own work: the plan,
 * one run per point in its state, the control's anchoring, the predictions
 * at the cache the job really had, and the verdict.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { summarizeIterations } from '../../src/analysis/summarize.js';
import { ExitCode, UserError } from '../../src/errors.js';
import { FakeCappedState, FakeDataSource } from '../support/fake-data-source.js';
import type { SourceRun } from '../../src/profile/data-sources/source-run.js';
import type { ModeRunInput } from '../../src/profile/run-mode.js';
import type { Iteration, ModeResult, Profile, ResourceSample } from '../../src/schema/profile.js';
import { MemorySink } from '../support/memory-sink.js';
import { readProfile } from '../../src/store/profile-store.js';
import { anchorToControl, errorSplit } from '../../src/validate/results.js';
import {
  runValidation,
  VALIDATE_CAP_POLICY,
  type ValidateInput,
  type ValidationRun,
} from '../../src/validate/run-validate.js';
import type { PlannedPoint } from '../../src/validate/plan.js';
import { modelVerdict, validationFailure } from '../../src/validate/verdict.js';
import { baseScenario, fitModel, isNotEnoughData, predict, type FittedModel } from '../../src/whatif/model.js';

const FIXTURE = new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url);
// Never made: the points' folders and readings go to a memory sink, the fake runner starts no job.
const root = path.join(os.tmpdir(), `dsa-validate-unwritten-${process.pid}`);
const sink = new MemorySink();

const profile: Profile = readProfile(FIXTURE.pathname);
// As validate fits it: its cap holds an LRU of the closed files, so its cache points are exact LRU's.
const fit = fitModel(profile, { pageCacheModel: VALIDATE_CAP_POLICY });
if (fit.kind !== 'fitted') throw new Error('the fixture must fit');
const model: FittedModel = fit.model;
const SAMPLES = profile.modes.cached!.summary!.samplesPerIter;

type RunEnv = ModeRunInput['env'];

/** What the fake job does at a run: its samples/s, and for a cache point its hit ratio once the cache filled. */
type Truth = (input: ModeRunInput) => { samplesPerSec: number; hitRatio: number } | 'fail';

/**
 * A runner that sets the run's state up, runs `truth`'s pace on a virtual clock, reports progress, and undoes the
 * state.
 */
function fakeRunner(truth: Truth) {
  const calls: {
    mode: string;
    label: string;
    numWorkers?: number;
    argv: string[];
    minIterations: number;
    maxIterations: number;
    env: RunEnv;
  }[] = [];
  let clockMs = 1_700_000_000_000;
  const run = async (input: ModeRunInput): Promise<ModeResult> => {
    calls.push({
      mode: input.mode,
      label: path.basename(input.modeDir),
      numWorkers: input.numWorkers,
      argv: input.wrapArgv(input.argv),
      minIterations: input.minIterations,
      maxIterations: input.maxIterations,
      env: input.env,
    });
    const prepared = await input.cacheState.prepare(input.mode, input.dataset);
    const answer = truth(input);
    const startedAt = clockMs;
    const iterations: Iteration[] = [];
    const resources: ResourceSample[] = [];
    let readBytes = 0;
    const sample = () =>
      resources.push({
        t: clockMs,
        cpuPct: 50,
        jobCpuSec: 0,
        jobProcesses: 1,
        jobReadBytes: readBytes,
        diskReadBytesPerSec: 0,
        pageCacheBytes: 0,
      });
    sample();
    const count = answer === 'fail' ? 0 : input.minIterations;
    for (let i = 0; i < count && answer !== 'fail'; i++) {
      // Half of each iteration waits for its batch, half computes; its reads fall within it.
      const halfMs = (SAMPLES / answer.samplesPerSec) * 500;
      clockMs += halfMs;
      iterations.push({ i, t: clockMs, waitMs: halfMs, computeMs: halfMs, samples: SAMPLES });
      clockMs += halfMs;
      readBytes += (1 - answer.hitRatio) * SAMPLES * model.bytesPerSample * model.readAmplification;
      sample();
    }
    clockMs += 1000;
    sample();
    input.onProgress?.({
      mode: input.mode,
      iterations: count,
      maxIterations: input.maxIterations,
      relativePrecision: null,
      medianIterMs: null,
      elapsedSec: 1,
    });
    await prepared.finish();
    const summary = summarizeIterations(iterations, { workers: 2 });
    return {
      mode: input.mode,
      status: answer === 'fail' ? 'failed' : 'ok',
      stopReason: answer === 'fail' ? 'job-failed' : 'budget',
      jobExitCode: answer === 'fail' ? 1 : 0,
      jobSignal: null,
      startedAt,
      wallSec: (clockMs - startedAt) / 1000,
      state: {
        proven: true,
        reason: 'fake',
        residentBytesBefore: 0,
        datasetBytes: input.dataset.bytes,
        readBytes: null,
        consumedBytes: 0,
        readFraction: null,
        readBytesSource: 'fake',
      },
      ranks: [
        {
          rank: 0,
          pid: 1,
          workers: input.numWorkers ?? 2,
          ...(input.numWorkers !== undefined ? { loader: { workers: input.numWorkers, scriptWorkers: 2 } } : {}),
          iterations,
          summary,
        },
      ],
      paceRank: 0,
      summary,
      resources,
      jobCpuSecPerSample: null,
      storageReadBytesPerSec: null,
      badEventLines: 0,
      logs: { stdout: path.join(root, 'none.log'), stderr: path.join(root, 'none.log') },
      cpus: null,
    };
  };
  return { run, calls };
}

const CACHE_BYTES = Math.round(profile.dataset.bytes / 2);

function validateInput(name: string, source: FakeDataSource, runner: ValidateInput['modeRunner']): ValidateInput {
  return {
    profile,
    request: { cacheSizes: [{ bytes: CACHE_BYTES }], cpuCounts: [], workerCounts: [4], control: true },
    epochs: 2,
    precision: 0.05,
    maxIterations: 100,
    dataSource: source,
    cwd: root,
    env: {},
    workDir: path.join(root, name),
    sink,
    timeoutSec: 60,
    pauseReclaim: false,
    modeRunner: runner,
  };
}

/** The profile's own data, made up: its files and bytes. */
const fakeData = (options: ConstructorParameters<typeof FakeDataSource>[0] = {}) =>
  new FakeDataSource({ files: profile.dataset.files, fileBytes: profile.dataset.meanFileBytes, ...options });

/**
 * The job on a machine `slower` times slower in its CPU-bound stages than when profiled: the anchored model's rates.
 */
const slowerMachine = (slower: number): Truth => {
  const anchored = anchorToControl(model, slower);
  const base = { ...baseScenario(model), epochs: null };
  return (input) => {
    if (input.mode === 'cold' && input.cacheState instanceof FakeCappedState) {
      const at = predict(anchored, { ...base, cacheBytes: input.cacheState.capBytes, cachePolicy: 'page-cache' });
      return { samplesPerSec: at.samplesPerSec, hitRatio: at.steadyHitRatio };
    }
    const workers = input.numWorkers !== undefined ? { workers: input.numWorkers } : {};
    return {
      samplesPerSec: predict(anchored, { ...base, cacheBytes: model.datasetBytes, ...workers }).samplesPerSec,
      hitRatio: 1,
    };
  };
};

async function validate(input: ValidateInput): Promise<{ run: ValidationRun; plans: PlannedPoint[][] }> {
  const plans: PlannedPoint[][] = [];
  const outcome = await runValidation(input, { onSignal: () => () => {}, onPlan: (plan) => plans.push(plan) });
  assert.ok(!isNotEnoughData(outcome));
  return { run: outcome, plans };
}

test('validate plans its points, runs each in its state, anchors to the control and judges the model', async () => {
  const source = fakeData();
  const runner = fakeRunner(slowerMachine(1.25));
  const { run, plans } = await validate(validateInput('slower', source, runner.run));
  const { report, plan } = run;
  assert.deepEqual(plans, [plan], 'the plan is announced once, before the first point');
  assert.deepEqual(
    plan.map((p) => p.point.kind),
    ['control', 'cache', 'workers'],
  );
  assert.deepEqual(
    runner.calls.map((c) => c.label),
    ['point-1-control', `point-2-cache-${CACHE_BYTES}`, 'point-3-workers-4'],
  );
  // The control and workers points run cached; the cache point runs cold under a cap, its epochs measured after the
  // first.
  assert.deepEqual(
    runner.calls.map((c) => c.mode),
    ['cached', 'cold', 'cached'],
  );
  assert.equal(runner.calls[1].minIterations, Math.ceil(profile.dataset.files / SAMPLES) * 2);
  // Each run holds to the budget the plan shows (the progress line's "of at most N"), and the cache point to its epochs.
  assert.deepEqual(
    runner.calls.map((c) => c.maxIterations),
    plan.map((p) => p.maxIterations),
  );
  assert.equal(runner.calls[1].minIterations, plan[1].iterations);
  assert.equal(runner.calls[2].numWorkers, 4);
  assert.deepEqual(
    source.modeState.prepared.map((p) => [p.mode, p.finished]),
    [
      ['cached', true],
      ['cached', true],
    ],
  );
  assert.deepEqual(
    source.cappedStates.map((s) => [s.capBytes, s.prepared.length, s.prepared[0].finished]),
    [[CACHE_BYTES, 1, true]],
  );
  // The profile throttled its cold mode: the cache point reads under the same throttle, and only it.
  assert.deepEqual(source.throttles, [
    { name: `validate-${process.pid}`, bytesPerSec: profile.options.storageBwBytesPerSec, removed: true },
  ]);
  assert.deepEqual(
    runner.calls.map((c) => c.argv[0] === 'throttled'),
    [false, true, false],
  );
  // Like the profile's runs, the points write nothing of the user's: checkpoints to scratch, trackers off.
  for (const call of runner.calls) {
    assert.equal(call.env.WANDB_MODE, 'disabled');
    assert.equal(call.env.DSA_SCRATCH_DIR, path.join(root, 'slower', 'scratch'));
    assert.equal(call.env.MLFLOW_TRACKING_URI, `file://${path.join(root, 'slower', 'scratch', 'mlruns')}`);
  }

  const [control, cache, workers] = report.results;
  // A machine 25% slower in its CPU-bound stages: the cached points' predictions 25% high, and right once anchored to
  // the control.
  assert.ok(Math.abs(control.relativeError! - 0.25) < 1e-6, String(control.relativeError));
  assert.ok(Math.abs(report.controlAbsError! - 0.25) < 1e-6);
  assert.ok(Math.abs(workers.relativeError! - 0.25) < 0.01, `workers: ${workers.relativeError}`);
  // At half the cache the job waits on storage, which the slower CPUs do not change: the unanchored model is as right
  // there.
  const half = { ...baseScenario(model), epochs: null, cacheBytes: CACHE_BYTES, cachePolicy: 'page-cache' as const };
  const storageBound =
    predict(model, half).samplesPerSec / predict(anchorToControl(model, 1.25), half).samplesPerSec - 1;
  assert.ok(Math.abs(cache.relativeError! - storageBound) < 0.01, `cache: ${cache.relativeError} vs ${storageBound}`);
  // The job hit as often as exact LRU predicts: none of the error is the policy's, all of it the rest of the model's.
  assert.equal(model.pageCachePolicy.model, 'exact-lru');
  assert.ok(Math.abs(cache.measuredHitRatio! - cache.predictedHitRatio!) < 0.01);
  const split = errorSplit(cache)!;
  assert.ok(
    Math.abs(split.policy) < 0.01 && Math.abs(split.policy + split.rest - cache.relativeError!) < 1e-9,
    JSON.stringify(split),
  );
  assert.equal(control.atMeasuredHitSamplesPerSec, null, 'only cache points split their error');
  for (const r of [cache, workers]) {
    assert.equal(r.status, 'measured', r.note);
    assert.ok(Math.abs(r.anchoredError!) < 0.01, `${r.point.kind}: anchored ${r.anchoredError}`);
  }
  // The cache point: predicted at the cache its readings showed, its hit ratio measured from the source's meter.
  assert.equal(cache.residentBytes, CACHE_BYTES);
  assert.equal(cache.residency?.held, true);
  // Its readings, kept beside its logs for when a cap does not hold.
  assert.ok(sink.folders.has(path.join(root, 'slower')));
  const readings = sink.files
    .get(path.join(root, 'slower', `point-2-cache-${CACHE_BYTES}`, 'residency.jsonl'))!
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line));
  assert.ok(readings.length > 0 && readings.every((r) => r.residentBytes === CACHE_BYTES), JSON.stringify(readings));
  assert.ok(
    Math.abs(cache.measuredHitRatio! - cache.predictedHitRatio!) < 0.01,
    `${cache.measuredHitRatio} vs ${cache.predictedHitRatio}`,
  );
  // Median over the cache and workers points: half of 25% off and half near 0 lands between.
  assert.ok(report.medianAbsError! > 0.1, String(report.medianAbsError));
  assert.deepEqual(modelVerdict(report), {
    kind: 'beyond-target',
    medianAbsError: report.medianAbsError,
    targetAbsError: 0.1,
  });
  assert.ok(Math.abs(report.anchoredMedianAbsError!) < 0.01);
  assert.equal(validationFailure(report, plan.length), null);
});

test('the model within its target where the machine runs as profiled; a cap that did not hold is left out', async () => {
  const source = fakeData({ cappedShare: 0.5 });
  const { run } = await validate(validateInput('as-profiled', source, fakeRunner(slowerMachine(1)).run));
  const [control, cache, workers] = run.report.results;
  assert.ok(Math.abs(control.relativeError!) < 1e-6);
  assert.equal(cache.status, 'not-held', cache.note);
  assert.match(cache.note, /NOT held/);
  assert.equal(workers.status, 'measured');
  assert.equal(run.report.notHeld, 1);
  assert.equal(modelVerdict(run.report).kind, 'within-target');
});

test('a job that fails at every point is a failed validation, with its log tail', async () => {
  const runner = fakeRunner(() => 'fail');
  const { run } = await validate(validateInput('failing', fakeData(), runner.run));
  assert.equal(runner.calls.length, 3, 'a failed point does not stop the others');
  assert.ok(run.report.results.every((r) => r.status === 'failed' && r.measuredSamplesPerSec === null));
  assert.deepEqual(validationFailure(run.report, run.plan.length), {
    kind: 'job-failed',
    exitCode: ExitCode.JobFailed,
  });
});

test('cache points of a throttled profile on data that cannot be throttled are refused before anything runs', async () => {
  const runner = fakeRunner(slowerMachine(1));
  const plans: PlannedPoint[][] = [];
  const refused = runValidation(validateInput('refused', fakeData({ device: null }), runner.run), {
    onSignal: () => () => {},
    onPlan: (p) => plans.push(p),
  });
  await assert.rejects(
    refused,
    (error: unknown) => error instanceof UserError && error.exitCode === ExitCode.Environment,
  );
  assert.deepEqual([runner.calls.length, plans.length], [0, 0]);
  // Without cache points nothing reads storage, so nothing needs the throttle.
  const noCache = {
    ...validateInput('no-cache', fakeData({ device: null }), runner.run),
    request: { cacheSizes: [], cpuCounts: [], workerCounts: [4], control: true },
  };
  const { run } = await validate(noCache);
  assert.deepEqual(
    run.report.results.map((r) => r.status),
    ['measured', 'measured'],
  );
});

test('a bandwidth point runs the cold mode under a throttle of its own, removed after it, and is judged against whatif --cache 0 at that bandwidth', async () => {
  const source = fakeData();
  const bandwidth = 5e6;
  // The job as the model predicts it cold at the bandwidth: the unanchored model is right.
  const cold = predict(model, {
    ...baseScenario(model),
    epochs: null,
    cacheBytes: 0,
    storageBytesPerSec: bandwidth,
  }).samplesPerSec;
  const runner = fakeRunner((input) =>
    input.mode === 'cold' ? { samplesPerSec: cold, hitRatio: 0 } : slowerMachine(1)(input),
  );
  const input = {
    ...validateInput('bandwidth', source, runner.run),
    request: { cacheSizes: [], cpuCounts: [], workerCounts: [], bandwidths: [bandwidth], control: true },
  };
  const { run } = await validate(input);
  assert.deepEqual(
    run.plan.map((p) => p.point),
    [{ kind: 'control' }, { kind: 'bandwidth', bytesPerSec: bandwidth }],
  );
  assert.deepEqual(
    runner.calls.map((c) => [c.label, c.mode]),
    [
      ['point-1-control', 'cached'],
      [`point-2-bandwidth-${bandwidth}`, 'cold'],
    ],
  );
  assert.deepEqual(source.throttles, [{ name: `validate-${process.pid}-bw-1`, bytesPerSec: bandwidth, removed: true }]);
  assert.deepEqual(
    runner.calls.map((c) => c.argv[0] === 'throttled'),
    [false, true],
  );
  const point = run.report.results[1];
  assert.equal(point.status, 'measured', point.note);
  assert.match(point.note, /^cold mode with reads held to 5\.0 MB\/s: ok/);
  assert.ok(Math.abs(point.relativeError!) < 0.01, `bandwidth point: ${point.relativeError}`);
  assert.ok(
    point.measuredSamplesPerSec! < run.report.results[0].measuredSamplesPerSec!,
    'the throttled cold mode ran slower than the control',
  );
});

test('a bandwidth point whose cold mode was not proven cold tested another setting: not held, left out of the errors', async () => {
  const runner = fakeRunner(slowerMachine(1));
  const unproven: ValidateInput['modeRunner'] = async (input) => {
    const result = await runner.run(input);
    return input.mode === 'cold'
      ? {
          ...result,
          state: { ...result.state, proven: false, reason: '40% of the dataset was still in the page cache' },
        }
      : result;
  };
  const input = {
    ...validateInput('bandwidth-unproven', fakeData(), unproven),
    request: { cacheSizes: [], cpuCounts: [], workerCounts: [], bandwidths: [5e6], control: true },
  };
  const { run } = await validate(input);
  const point = run.report.results[1];
  assert.equal(point.status, 'not-held', point.note);
  assert.match(point.note, /cold state NOT proven \(40% of the dataset was still in the page cache\)/);
  assert.equal(run.report.notHeld, 1);
  assert.equal(run.report.medianAbsError, null);
});

test('bandwidth points on data that cannot be throttled are refused before anything runs', async () => {
  const runner = fakeRunner(slowerMachine(1));
  const input = {
    ...validateInput('no-throttle', fakeData({ throttleObstacle: 'no io controller' }), runner.run),
    request: { cacheSizes: [], cpuCounts: [], workerCounts: [], bandwidths: [5e6], control: true },
  };
  await assert.rejects(
    runValidation(input, { onSignal: () => () => {} }),
    (error: unknown) =>
      error instanceof UserError &&
      error.exitCode === ExitCode.Environment &&
      /cannot be held to a bandwidth here \(no io controller\)/.test(error.message),
  );
  assert.equal(runner.calls.length, 0);
});

test('a profile whose block stalled is refused before anything runs: exit 4, naming the stall', async () => {
  const runner = fakeRunner(slowerMachine(1));
  const source = fakeData();
  const stalled: Profile = {
    ...profile,
    modes: {
      ...profile.modes,
      cold: {
        ...profile.modes.cold!,
        stalled: { cause: 'no-bytes', atSec: 12, text: 'the endpoint sent nothing from 12.0 s into the cold block' },
      },
    },
  };
  await assert.rejects(
    runValidation({ ...validateInput('stalled', source, runner.run), profile: stalled }, { onSignal: () => () => {} }),
    (error: unknown) =>
      error instanceof UserError &&
      error.exitCode === ExitCode.MissingInput &&
      /^the profile's cold block stalled \(the endpoint sent nothing from 12\.0 s into the cold block\): /.test(
        error.message,
      ),
  );
  assert.equal(runner.calls.length, 0);
  assert.equal(source.listed, 0);
});

/** A source whose waits (its listing, a point's download) end only at the interrupt validate binds to it. */
class WaitingSource extends FakeDataSource {
  bound: SourceRun | null = null;
  waitInList = false;
  bindRun(run: SourceRun): void {
    this.bound = run;
  }
  /** A download as remote data's: it honours the bound signal, and nothing else ends it. */
  download(): Promise<never> {
    const signal = this.bound?.signal;
    return new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason), { once: true }));
  }
  override async list() {
    if (this.waitInList) await this.download();
    return super.list();
  }
}

/** onSignal hooks whose handler a test calls as Ctrl-C would; `registered` says whether one is still in place. */
function fakeSignals() {
  let handler: (() => void) | null = null;
  return {
    onSignal: (h: () => void) => {
      handler = h;
      return () => {
        handler = null;
      };
    },
    interrupt: () => handler?.(),
    registered: () => handler !== null,
  };
}

test('Ctrl-C while a point downloads its data stops the download: an interrupted run, exit 130, the handler removed', async () => {
  const source = new WaitingSource({ files: profile.dataset.files, fileBytes: profile.dataset.meanFileBytes });
  const signals = fakeSignals();
  const runner = fakeRunner(slowerMachine(1));
  const downloading = async (input: ModeRunInput): Promise<ModeResult> => {
    if (runner.calls.length === 1) {
      setTimeout(signals.interrupt, 10);
      await source.download();
    }
    return runner.run(input);
  };
  const outcome = await runValidation(validateInput('interrupted-download', source, downloading), {
    onSignal: signals.onSignal,
  });
  assert.ok(!isNotEnoughData(outcome));
  assert.equal(outcome.report.interrupted, true);
  assert.equal(outcome.report.results.length, 1, 'the control measured before it is kept');
  assert.equal(validationFailure(outcome.report, outcome.plan.length)?.exitCode, ExitCode.Interrupted);
  assert.equal(signals.registered(), false);
  assert.ok(source.closed);
});

test('Ctrl-C while the data is listed: an interrupted run with nothing measured, exit 130', async () => {
  const source = new WaitingSource({ files: profile.dataset.files, fileBytes: profile.dataset.meanFileBytes });
  source.waitInList = true;
  const signals = fakeSignals();
  const runner = fakeRunner(slowerMachine(1));
  setTimeout(signals.interrupt, 10);
  const outcome = await runValidation(validateInput('interrupted-listing', source, runner.run), {
    onSignal: signals.onSignal,
  });
  assert.ok(!isNotEnoughData(outcome));
  assert.equal(outcome.report.interrupted, true);
  assert.equal(outcome.report.results.length, 0);
  assert.equal(validationFailure(outcome.report, outcome.plan.length)?.exitCode, ExitCode.Interrupted);
  assert.equal(runner.calls.length, 0);
  assert.equal(signals.registered(), false);
});

test('no file was written: the folders and readings went to the memory sink', () => {
  assert.ok(sink.files.size > 0);
  assert.equal(fs.existsSync(root), false);
});
