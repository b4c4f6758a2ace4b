import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { Profile } from '../../src/schema/profile.js';
import { baseScenario, predict } from '../../src/whatif/model.js';
import { recommend, workersFor } from '../../src/whatif/recommend.js';
import { workersParallelism } from '../../src/whatif/fit/loader-workers.js';
import { fitOrFail } from './fit-or-fail.js';
import { mulberry32 } from '../../src/random.js';

// The stored emulated profile (2 CPUs, prep-bound: 10.5 ms step, 32.1 ms cached, u = 14.4 CPU-ms a sample),
// retold as the H100 job: 4 loader workers on a 16-CPU server, most CPUs idle.
const stored = JSON.parse(
  readFileSync(new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url), 'utf8'),
) as Profile;
function withWorkers(workers: number, cpus: number, sweep: { workers: number; iterMs: number }[] = []): Profile {
  const profile = structuredClone(stored);
  profile.host.cpus = cpus;
  for (const rank of profile.modes.cached!.ranks) rank.workers = workers;
  profile.workersSweep = sweep.map(({ workers: w, iterMs }) => {
    const point = structuredClone(profile.modes.cached!);
    point.workersAsked = w;
    point.summary = {
      ...point.summary!,
      iterMs: { ...point.summary!.iterMs, mean: iterMs },
      samplesPerSec: (1000 * point.summary!.samplesPerIter) / iterMs,
    };
    return point;
  });
  return profile;
}

test('a job whose 4 workers hold prep back on 16 CPUs: more or fewer CPUs change nothing, more workers do', () => {
  const model = fitOrFail(withWorkers(4, 16));
  const base = baseScenario(model);
  const now = predict(model, base);
  assert.ok(Math.abs(now.iterMs - 32.12) < 0.5, `reproduces the cached mode: ${now.iterMs}`);
  for (const cpus of [8, 32, 64]) {
    const other = predict(model, { ...base, cpus });
    assert.ok(
      Math.abs(other.samplesPerSec - now.samplesPerSec) < 1e-6,
      `${cpus} CPUs: ${other.samplesPerSec} vs ${now.samplesPerSec}`,
    );
  }
  // Fewer CPUs than workers do slow it: 2 CPUs hold half of what 4 workers did.
  assert.ok(predict(model, { ...base, cpus: 2 }).samplesPerSec < 0.6 * now.samplesPerSec);
  const eight = predict(model, { ...base, workers: 8 });
  assert.ok(
    Math.abs(eight.samplesPerSec / now.samplesPerSec - 2) < 0.01,
    `8 workers: ${eight.samplesPerSec / now.samplesPerSec}x`,
  );

  const [first] = recommend(model, base);
  assert.equal(first.kind, 'workers', 'the advice names num_workers first');
  // eff needed = u / (step per sample) = 14.36 / 2.63 = 5.46 CPUs; each worker gave 1.79 / 4 = 0.447.
  assert.equal(first.value, 13);
  assert.match(
    first.text,
    /loader workers: 13 per rank \(4 now\) remove the prep stall: .*fits the 16 CPUs here \(needs 13\)\. Paste: DataLoader\(\.\.\., num_workers=13\)/,
  );
  assert.equal(first.prediction!.bottleneck, 'compute');
});

test('on too few CPUs the workers answer is the best count there, and the CPUs answer raises the workers with them', () => {
  const model = fitOrFail(withWorkers(2, 4));
  const base = baseScenario(model);
  const workers = workersFor(model, base, predict(model, base))!;
  assert.equal(workers.value, null);
  assert.match(
    workers.text,
    /no count removes the prep stall on 4 CPUs; 4 per rank \(2 now\) is the most they can use/,
  );
  const cpus = recommend(model, base).find((r) => r.kind === 'cpus')!;
  assert.match(cpus.text, /with num_workers=\d+ per rank/);
  assert.equal(cpus.prediction!.bottleneck, 'compute');
});

test('a workers sweep replaces the linear assumption: past the knee, more workers buy nothing', () => {
  // Measured: 4 workers 32.12 ms (the cached mode), 8 workers 20 ms, 16 workers 20 ms (saturated).
  const model = fitOrFail(
    withWorkers(4, 16, [
      { workers: 8, iterMs: 20 },
      { workers: 16, iterMs: 20 },
    ]),
  );
  const effAt = (w: number) => workersParallelism(model, w);
  assert.ok(Math.abs(effAt(8) / effAt(4) - stored.modes.cached!.summary!.iterMs.mean / 20) < 1e-9);
  assert.ok(Math.abs(effAt(16) - effAt(8)) < 1e-9);
  const base = baseScenario(model);
  assert.ok(Math.abs(predict(model, { ...base, workers: 12 }).iterMs - 20) < 0.01);
  const best = workersFor(model, base, predict(model, base))!;
  assert.equal(best.value, null, 'the sweep shows no count reaching the 10.5 ms step');
  assert.ok(model.parameters.some((p) => p.symbol === 'eff_w(1)' && /profile --workers 8,16/.test(p.source)));
});

test('--workers 0: the training process loads each batch itself, in series with its step', () => {
  const model = fitOrFail(withWorkers(2, 2, [{ workers: 0, iterMs: 70 }]));
  const zero = predict(model, { ...baseScenario(model), workers: 0 });
  assert.ok(Math.abs(zero.iterMs - 70) < 0.01, `${zero.iterMs}`);
  assert.equal(zero.bottleneck, 'prep');
});

test("the script's own count swept again is one point, the mean of both runs", () => {
  const cachedMs = stored.modes.cached!.summary!.iterMs.mean;
  const model = fitOrFail(
    withWorkers(4, 16, [
      { workers: 4, iterMs: cachedMs / 2 },
      { workers: 8, iterMs: cachedMs / 3 },
    ]),
  );
  assert.deepEqual(
    model.workersPoints.map((p) => p.workers),
    [4, 8],
  );
  const eff = (ms: number) => (model.prepCpuSecPerSample * 1000) / (ms / stored.modes.cached!.summary!.samplesPerIter);
  assert.ok(Math.abs(model.workersPoints[0].eff - (eff(cachedMs) + eff(cachedMs / 2)) / 2) < 1e-9);
  assert.ok(Number.isFinite(workersParallelism(model, 6)));
});

test('a noisy sweep of a saturating loader: predictions between and past the measured counts stay near the truth', () => {
  // Truth: each worker adds 0.45 CPUs' worth of prep until 6 CPUs' worth (the 16-CPU server's workers share what is
  // left).
  const samplesPerIter = stored.modes.cached!.summary!.samplesPerIter;
  const prepCpuMs = 14.36; // u of the stored profile, CPU-ms per sample
  const trueEff = (w: number) => Math.min(0.45 * w, 6);
  const trueIterMs = (w: number) => Math.max(10.52, (prepCpuMs / trueEff(w)) * samplesPerIter);
  const random = mulberry32(17);
  for (let trial = 0; trial < 20; trial++) {
    const noisy = (ms: number) => ms * (1 + 0.05 * (2 * random() - 1)); // ±5% run-to-run
    const sweep = [2, 8, 16].map((w) => ({ workers: w, iterMs: noisy(trueIterMs(w)) }));
    const profile = withWorkers(4, 16, sweep);
    profile.modes.cached!.summary!.iterMs.mean = noisy(trueIterMs(4));
    const model = fitOrFail(profile);
    const base = baseScenario(model);
    for (const w of [3, 6, 24]) {
      const predicted = predict(model, { ...base, workers: w }).iterMs;
      assert.ok(
        Math.abs(predicted / trueIterMs(w) - 1) < 0.12,
        `trial ${trial}, ${w} workers: ${predicted.toFixed(1)} ms vs ${trueIterMs(w).toFixed(1)}`,
      );
    }
    // Between the last prep-bound count (8) and one that kept up (16, a lower bound of eff), the line errs slow, never
    // fast.
    const at12 = predict(model, { ...base, workers: 12 }).iterMs;
    assert.ok(
      at12 >= trueIterMs(12) * 0.95,
      `trial ${trial}, 12 workers: ${at12.toFixed(1)} ms, truth ${trueIterMs(12).toFixed(1)}`,
    );
  }
});
