// The what-if on jobs whose loader keeps up: each resource in turn did or did
// not set the pace, and the predictions are held against the analytic truth of
// the case (a worker is one process with one CPU at most, the CPUs carry the
// step's CPU and prep together, storage reads at its probed rate).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { Profile } from '../../src/schema/profile.js';
import { baseScenario, predict, type FittedModel, type Scenario } from '../../src/whatif/model.js';
import { whatif } from '../../src/whatif/whatif.js';
import { isNotEnoughData } from '../../src/whatif/model.js';
import { summary } from '../analysis/modes.js';
import { fitOrFail } from './fit-or-fail.js';

const stored = JSON.parse(
  readFileSync(new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url), 'utf8'),
) as Profile;

/** A job as the profile would measure it. Times per iteration in ms, CPU per sample in CPU-ms. */
interface Job {
  batch: number;
  /** The step (synthetic mode), ms. */
  stepMs: number;
  /** The step's own CPU per sample (k_s): 0 for a sleeping accelerator, about the step per sample for CPU training. */
  stepCpuMs: number;
  /** Prep CPU per sample (u). */
  prepCpuMs: number;
  workers: number;
  cpus: number;
  /** The cached and cold modes, ms (default: the step: the loader keeps up). */
  cachedMs?: number;
  coldMs?: number;
  /** What the cold mode read, bytes/s. */
  readRate: number;
  /** The storage probe's rate, bytes/s; null: no probe. */
  probeRate: number | null;
  /** CPUs busy outside the job while the cached mode ran. */
  externalCpus?: number;
}

function profileOf(job: Job): Profile {
  const p = structuredClone(stored);
  p.options.storageBwBytesPerSec = null;
  p.host.cpus = job.cpus;
  const times = {
    synthetic: job.stepMs,
    cached: job.cachedMs ?? job.stepMs,
    cold: job.coldMs ?? job.cachedMs ?? job.stepMs,
  };
  for (const mode of ['synthetic', 'cached', 'cold'] as const) {
    const m = p.modes[mode]!;
    const s = summary(times[mode], times[mode] * 0.005, job.batch, job.stepMs);
    m.summary = s;
    m.ranks[0].summary = s;
    m.ranks[0].workers = job.workers;
    m.ranks[0].mainCpuMsPerSample = job.stepCpuMs;
    m.jobCpuSecPerSample = (job.stepCpuMs + (mode === 'synthetic' ? 0 : job.prepCpuMs)) / 1000;
    m.cpus = null;
    m.resources = [];
  }
  const external = job.externalCpus ?? 0;
  // Samples every 250 ms for 10 s: the machine busy with the job's own CPU (none here) and the other load.
  p.modes.cached!.resources = Array.from({ length: 41 }, (_, k) => ({
    t: k * 250,
    cpuPct: (100 * external) / job.cpus,
    jobCpuSec: 0,
    jobProcesses: 3,
    jobReadBytes: 0,
    diskReadBytesPerSec: 0,
    pageCacheBytes: 0,
  }));
  p.modes.cold!.storageReadBytesPerSec = job.readRate;
  if (job.probeRate !== null) {
    p.storageProbe = {
      bytesPerSec: job.probeRate,
      bytesRead: 2e8,
      storageBytes: 2e8,
      files: 700,
      sec: 2e8 / job.probeRate,
      concurrency: job.workers,
      requestBytes: 262144,
      proven: true,
      reason: 'test',
    };
  }
  return p;
}

/** Per-iteration ms at a scenario. */
const at = (model: FittedModel, change: Partial<Scenario>): number =>
  predict(model, { ...baseScenario(model), ...change }).iterMs;

/** Within 1% of the truth. */
function near(actual: number, truth: number, what: string): void {
  assert.ok(
    Math.abs(actual - truth) <= 0.01 * truth,
    `${what}: predicted ${actual.toFixed(2)} ms, truth ${truth.toFixed(2)} ms`,
  );
}

// A sleeping accelerator (no CPU): 200 ms a batch of 16, 2 ms of prep CPU a sample (32 ms a batch), 2 workers on 2
// CPUs.
const sleeping: Job = {
  batch: 16,
  stepMs: 200,
  stepCpuMs: 0,
  prepCpuMs: 2,
  workers: 2,
  cpus: 2,
  readRate: 7e6,
  probeRate: 2e8,
};

test('a loader with headroom: a faster accelerator gains until the workers cap it, never "no gain"', () => {
  const model = fitOrFail(profileOf(sleeping));
  near(at(model, {}), 200, 'as profiled');
  // Workers cap at u*b/W = 16 ms a batch; the CPUs at (0 + 2) * 16 / 2 = 16 ms.
  near(at(model, { gpuSpeedup: 4 }), 50, '4x');
  near(at(model, { gpuSpeedup: 8 }), 25, '8x');
  near(at(model, { gpuSpeedup: 16 }), 16, '16x (now the loader sets the pace)');
  assert.equal(predict(model, { ...baseScenario(model), gpuSpeedup: 16 }).bottleneck, 'prep');
  assert.equal(predict(model, { ...baseScenario(model), gpuSpeedup: 8 }).bottleneck, 'compute');
});

test('a loader with headroom: fewer workers and fewer CPUs cost nothing until their capacity binds', () => {
  const model = fitOrFail(profileOf(sleeping));
  near(at(model, { workers: 1 }), 200, 'one worker (32 ms a batch, well under 200)');
  near(at(model, { workers: 0 }), 232, 'no workers: the step and the prep in series');
  near(at(model, { cpus: 1 }), 200, 'one CPU (32 ms of CPU a batch)');
  near(at(model, { gpuSpeedup: 8, workers: 1 }), 32, '8x with one worker');
  near(at(model, { gpuSpeedup: 8, cpus: 1 }), 32, '8x on one CPU');
});

// CPU training: the step itself keeps one CPU busy (320 ms a batch of 32, 10 CPU-ms a sample), 2.12 CPU-ms of prep a
// sample.
const cpuTraining: Job = {
  batch: 32,
  stepMs: 320,
  stepCpuMs: 10,
  prepCpuMs: 2.12,
  workers: 2,
  cpus: 2,
  readRate: 5e6,
  probeRate: 2e8,
};

test('a step that runs on the CPU shares the CPUs with prep instead of holding one off the top', () => {
  const model = fitOrFail(profileOf(cpuTraining));
  assert.equal(model.computeOnCpu, true);
  near(at(model, {}), 320, 'as profiled');
  // One CPU does the step and the prep: (10 + 2.12) * 32.
  near(at(model, { cpus: 1 }), 387.84, 'one CPU');
  near(at(model, { workers: 0 }), 387.84, 'no workers');
  near(at(model, { workers: 1 }), 320, 'one worker');
  // A 2x faster step halves its CPU too: (5 + 2.12) * 32 / 2 = 114 ms of the CPUs, under the 160 ms step.
  near(at(model, { gpuSpeedup: 2 }), 160, '2x');
});

test('prep that set the pace keeps its measured capacity: a 2-worker loader at 400 ms a batch halves with one worker', () => {
  // 25 CPU-ms a sample, 2 workers: the loader delivered a batch every 400 ms (200 ms of work per worker... measured).
  const model = fitOrFail(profileOf({ ...sleeping, prepCpuMs: 50, cachedMs: 400, coldMs: 400 }));
  near(at(model, {}), 400, 'as profiled');
  near(at(model, { workers: 1 }), 800, 'one worker');
  near(at(model, { workers: 4 }), 400, 'four workers on the same 2 CPUs');
});

test('storage that never set the pace is taken from the probe; without one, the range says so', () => {
  // No cache: every sample from storage. 16 samples of the fixture's size a batch.
  const question = { gpuSpeedup: 8, cacheBytes: 0 };
  const probed = fitOrFail(profileOf(sleeping));
  assert.equal(probed.storageIsLowerBound, false);
  assert.equal(probed.storageBytesPerSec, 2e8);
  const fetchAt = (bytesPerSec: number, a: number): number => ((a * probed.bytesPerSample * 16) / bytesPerSec) * 1000;
  assert.ok(fetchAt(2e8, 1) < 25);
  near(at(probed, question), 25, 'probed storage keeps up at 8x');

  const unprobed = profileOf({ ...sleeping, probeRate: null });
  assert.equal(fitOrFail(unprobed).storageIsLowerBound, true);
  const result = whatif(unprobed, 'p.json', question);
  if (isNotEnoughData(result)) return assert.fail(result.reason);
  // The point keeps the rate the cold mode read (a lower bound); the fast end lets storage be as fast as it may be.
  near(result.prediction.iterMs, fetchAt(7e6, probed.readAmplification), "point at the cold mode's rate");
  near(result.prediction.range!.iterMs.low, 25, 'fast end');
  assert.match(result.prediction.range!.assumptions.join('\n'), /storage is no faster than the cold mode read it/);
});

test('slow storage asked of a job whose cold mode hid its reads: the range spans overlapped and serial reads', () => {
  const model = fitOrFail(profileOf(sleeping));
  // The cold mode could not tell how reads and prep overlap: any σ up to 1 explains it.
  assert.equal(model.overlapMeasured, false);
  assert.equal(model.serialUpperBound, 1);
  const result = whatif(profileOf(sleeping), 'p.json', { cacheBytes: 0, storageBytesPerSec: 2e7 });
  if (isNotEnoughData(result)) return assert.fail(result.reason);
  const fetch = (a: number): number => ((a * model.bytesPerSample * 16) / 2e7) * 1000;
  const prep = 16; // u * b / W
  const range = result.prediction.range!;
  near(result.prediction.iterMs, fetch(model.readAmplification), 'point: reads overlap prep, as the cold mode read');
  near(range.iterMs.low, fetch(model.readAmplification), 'fast end');
  // Slow end: reads in series with prep, and every consumed byte from storage (the cold mode read 96% of them).
  near(range.iterMs.high, fetch(1) + prep, 'slow end');
  assert.match(range.assumptions.join('\n'), /reads and pre-processing overlap/);
  assert.match(range.assumptions.join('\n'), /a miss reads 96% of its bytes from storage/);
});

test("other load on the machine widens an answer that leans on a worker's CPU, and the advice takes the slow end", () => {
  // One CPU of two was busy with other work while profiling: a worker, and a CPU, may give half of one.
  const job = { ...sleeping, externalCpus: 1 };
  const result = whatif(profileOf(job), 'p.json', { gpuSpeedup: 8, workers: 1 });
  if (isNotEnoughData(result)) return assert.fail(result.reason);
  const range = result.prediction.range!;
  near(result.prediction.iterMs, 32, 'point: a whole CPU');
  near(range.iterMs.high, 64, 'slow end: half a CPU');
  assert.match(range.assumptions.join('\n'), /a loader worker gets a whole CPU/);
  // At the slow end 2 CPUs give 32 ms of prep a batch against a 25 ms step: the advice asks for 3 CPUs (64 / 3 = 21
  // ms).
  const cpus = result.recommendations.find((r) => r.kind === 'cpus')!;
  assert.equal(cpus.value, 3, cpus.text);
  // Nothing assumed moves the profiled answer, so it carries no range.
  assert.equal(result.baseline.range!.assumptions.length, 0);
});

test('a ready batch still takes its hand-over: a faster step pays it in series', () => {
  // The loader kept up, yet each iteration waited 4 ms for a ready batch (queue, unpickling).
  const profile = profileOf(sleeping);
  for (const mode of ['cached', 'cold'] as const) {
    const m = profile.modes[mode]!;
    m.summary = { ...summary(204, 1, 16, 200) };
    m.ranks[0].summary = m.summary;
  }
  const model = fitOrFail(profile);
  near(model.handoverSecPerIter * 1000, 4, 'h');
  near(at(model, {}), 204, 'as profiled');
  near(at(model, { gpuSpeedup: 8 }), 29, '8x: 25 ms step + 4 ms hand-over');
  near(at(model, { workers: 0 }), 232, 'no workers: no hand-over, the process loads itself');
  assert.equal(predict(model, { ...baseScenario(model), gpuSpeedup: 8 }).bottleneck, 'compute');
});

test('whatif names the validate run for a setting the profile did not run, and none for one it did', () => {
  const profile = profileOf(sleeping);
  const one = whatif(profile, 'profiles/job.json', { workers: 1 });
  if (isNotEnoughData(one)) return assert.fail(one.reason);
  assert.equal(one.validateCommand, 'ds-analyzer validate profiles/job.json --workers 1');
  const same = whatif(profile, 'profiles/job.json', { workers: 2 });
  if (isNotEnoughData(same)) return assert.fail(same.reason);
  assert.equal(same.validateCommand, null);
  const twoChanges = whatif(profile, 'my profile.json', { workers: 1, cpus: 1 });
  if (isNotEnoughData(twoChanges)) return assert.fail(twoChanges.reason);
  assert.equal(twoChanges.validateCommand, null);
  const quoted = whatif(profile, "my profile's.json", { cpus: 1 });
  if (isNotEnoughData(quoted)) return assert.fail(quoted.reason);
  assert.equal(quoted.validateCommand, "ds-analyzer validate 'my profile'\\''s.json' --cpus 1");
});

/**
 * pytorch/examples dcgan as profiled here (CPU training, 2 workers on 2 CPUs): the step 560 ms a batch of 32
 * (17.5 CPU-ms a sample), prep 10.12 CPU-ms a sample; beside the loader the step ran 64 ms slower and each
 * iteration waited 16 ms for a ready batch, within the 2% the profile names a stall by: compute-bound.
 */
function contended(): Profile {
  const p = profileOf({
    batch: 32,
    stepMs: 560,
    stepCpuMs: 17.5,
    prepCpuMs: 10.12,
    workers: 2,
    cpus: 2,
    readRate: 4.4e6,
    probeRate: 2e8,
  });
  for (const mode of ['cached', 'cold'] as const) {
    const m = p.modes[mode]!;
    // Waits 16 ± 6 ms: the lower end (10) does not clear 2% of 640 ms.
    m.summary = { ...summary(640, 3, 32, 624), waitMs: { mean: 16, halfWidth: 6, proven: true } };
    m.ranks[0].summary = m.summary;
  }
  return p;
}

test('a step that ran slower beside its loader is contention, not a loader at capacity: fewer workers cost nothing', () => {
  const model = fitOrFail(contended());
  assert.equal(model.workersPoints[0].prepBound, false);
  near(model.contentionSecPerIter * 1000, 64, 'g');
  near(model.handoverSecPerIter * 1000, 16, 'h');
  // As the profile measured it, and named as it named it: compute-bound.
  near(at(model, {}), 640, 'as profiled');
  assert.equal(predict(model, baseScenario(model)).bottleneck, 'compute');
  // One worker gives 10.12 * 32 = 324 ms a batch, well under the step: the pace stays (before: 1,280 ms).
  near(at(model, { workers: 1 }), 640, 'one worker');
  // Loading in series: the step without contention or hand-over, plus the prep.
  near(at(model, { workers: 0 }), 560 + 323.84, 'no workers');
  // One CPU runs the step and the prep: (17.5 + 10.12) * 32 (before: 1,280 ms).
  near(at(model, { cpus: 1 }), 883.84, 'one CPU');
});

test("slow storage: a worker's reads run in series with its own prep, never with the CPUs' cap that holds a CPU-trained step", () => {
  const profile = contended();
  const model = fitOrFail(profile);
  const result = whatif(profile, 'p.json', { cacheBytes: 0, storageBytesPerSec: 16e6 });
  if (isNotEnoughData(result)) return assert.fail(result.reason);
  const fetchMs = ((model.readAmplification * model.bytesPerSample * 32) / 16e6) * 1000;
  const workerPrepMs = (10.12 * 32) / 2;
  assert.ok(
    fetchMs < 640 && fetchMs + workerPrepMs > 640,
    `the case: fetch ${fetchMs.toFixed(0)} ms, in series ${(fetchMs + workerPrepMs).toFixed(0)} ms`,
  );
  near(result.prediction.iterMs, 640, 'point: reads overlap prep');
  // Slow end: every byte from storage, in series with one worker's prep; not (17.5 + 10.12) * 32 / 2 = 442 ms of CPU
  // cap plus the reads.
  const fetchAll = ((model.bytesPerSample * 32) / 16e6) * 1000;
  near(result.prediction.range!.iterMs.high, fetchAll + workerPrepMs, 'slow end');
});

// Serial loading (W = 0) as profiled: the cached mode is the step and the training process's own prep in series,
// 30 ms + 32 x 7.5 ms = 270 ms a batch. A worker does what the training process did, in its time; W of them side by
// side, the CPUs shared with the step (docs/whatif.md, "Loader workers").
const serialLoading: Job = {
  batch: 32,
  stepMs: 30,
  stepCpuMs: 0,
  prepCpuMs: 7.5,
  workers: 0,
  cpus: 4,
  cachedMs: 270,
  coldMs: 270,
  readRate: 7e6,
  probeRate: null,
};

test('profiled at num_workers=0: workers take the prep off the step, one sample each in the serial time', () => {
  const model = fitOrFail(profileOf(serialLoading));
  near(at(model, {}), 270, 'as profiled (the stages in series)');
  near(at(model, { workers: 1 }), 240, 'one worker: 32 x 7.5 ms, the step beside it');
  near(at(model, { workers: 2 }), 120, 'two workers');
  near(at(model, { workers: 4 }), 60, 'four workers on 4 CPUs');
  near(at(model, { workers: 8 }), 60, 'eight workers still on 4 CPUs');
  assert.equal(predict(model, { ...baseScenario(model), workers: 1 }).bottleneck, 'prep');
  const effW1 = model.parameters.find((p) => p.symbol === 'eff_w(1)');
  assert.ok(effW1 && Number.isFinite(effW1.value), `eff_w(1) is a number: ${effW1?.value}`);
});

test('profiled at num_workers=0 on 2 CPUs with the step on the CPU: the CPUs cap the workers and the step together', () => {
  const model = fitOrFail(profileOf({ ...serialLoading, cpus: 2, stepCpuMs: 1 }));
  near(at(model, {}), 270, 'as profiled');
  near(at(model, { workers: 1 }), 240, 'one worker');
  // The CPUs: (7.5 + 1) x 32 / 2 = 136 ms a batch, over the two workers' 120.
  near(at(model, { workers: 2 }), 136, 'two workers share 2 CPUs with the step');
});

test('the bottleneck a prediction names is its largest stall: a prep stall larger than the fetch stall is prep', () => {
  // The loader at 400 ms a batch (a prep stall of 200 ms), reads adding 100 ms more in the cold mode.
  const model = fitOrFail(profileOf({ ...sleeping, prepCpuMs: 50, cachedMs: 400, coldMs: 500, probeRate: null }));
  const cold = predict(model, { ...baseScenario(model), cacheBytes: 0 });
  assert.ok(cold.fetchStallMs > 0.05 * cold.iterMs, `a fetch stall shows: ${cold.fetchStallMs.toFixed(1)} ms`);
  assert.ok(cold.prepStallMs > cold.fetchStallMs, `prep ${cold.prepStallMs} > fetch ${cold.fetchStallMs}`);
  assert.equal(cold.bottleneck, 'prep');
  // Slower storage makes the fetch stall the larger: then it is named.
  const slow = predict(model, {
    ...baseScenario(model),
    cacheBytes: 0,
    storageBytesPerSec: model.storageBytesPerSec / 4,
  });
  assert.ok(slow.fetchStallMs > slow.prepStallMs);
  assert.equal(slow.bottleneck, 'fetch');
});
