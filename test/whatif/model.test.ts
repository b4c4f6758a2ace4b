import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { ProfileSchema, type Profile } from '../../src/schema/profile.js';
import { baseScenario, fitModel, isNotEnoughData, predict, selfCheck, stageTimes } from '../../src/whatif/model.js';
import { effectiveParallelism } from '../../src/whatif/cpu-scaling.js';
import { fitOrFail } from './fit-or-fail.js';
import { MAX_STORAGE_UTILISATION, recommend, smallestCacheWithoutLateStall } from '../../src/whatif/recommend.js';
import type { FittedModel, Prediction, Scenario } from '../../src/whatif/model.js';
import { dataTime } from '../../src/whatif/overlap.js';
import { MISSING_TEXT } from '../../src/whatif/advice-text.js';
import { whatif } from '../../src/whatif/whatif.js';

/** Share of the data-free pace max(compute, prep) that storage spends fetching, at a prediction's hit ratio. */
function storageBusy(model: FittedModel, scenario: Scenario, p: Prediction): number {
  const t = stageTimes(model, { ...scenario, ...p.scenario }, p.steadyHitRatio);
  return t.fetch / Math.max(t.gpu, t.prep);
}
import { cacheSweep } from '../../src/whatif/sweep.js';
import { sizeHistogram } from '../../src/analysis/size-histogram.js';

const FIXTURE = new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url);
// Without its loader workers (as a job that does not report them): these tests are about the CPU, cache
// and storage terms; test/whatif/workers.test.ts covers the workers' cap.
const load = (): Profile => {
  const profile = ProfileSchema.parse(JSON.parse(readFileSync(FIXTURE, 'utf8')));
  for (const mode of Object.values(profile.modes)) for (const rank of mode?.ranks ?? []) rank.workers = null;
  return profile;
};

test('the fitted model reproduces the three measured modes', () => {
  const profile = load();
  const checks = selfCheck(fitOrFail(profile), profile);
  assert.deepEqual(
    checks.map((c) => c.mode),
    ['synthetic', 'cached', 'cold'],
  );
  for (const c of checks) {
    const error = Math.abs(c.predictedIterMs - c.measuredIterMs) / c.measuredIterMs;
    assert.ok(
      error < 0.03,
      `${c.mode}: model ${c.predictedIterMs.toFixed(2)} vs measured ${c.measuredIterMs.toFixed(2)}`,
    );
  }
});

test('every parameter names its source, unit and proof', () => {
  const model = fitOrFail(load());
  const symbols = model.parameters.map((p) => p.symbol);
  for (const s of ['T_gpu', 'u', 'B_storage', 's', 'D', 'h(M)']) assert.ok(symbols.includes(s), s);
  for (const p of model.parameters) {
    assert.ok(p.source.length > 0 && p.unit.length > 0 && Number.isFinite(p.value), JSON.stringify(p));
    assert.equal(typeof p.proven, 'boolean');
  }
  assert.match(model.parameters.find((p) => p.symbol === 'B_storage')!.source, /storageReadBytesPerSec/);
});

test('a missing mode or measurement is answered with not-enough-data naming the field, never thrown', () => {
  for (const mode of ['synthetic', 'cached', 'cold'] as const) {
    const profile = load();
    delete profile.modes[mode];
    const fit = fitModel(profile);
    assert.equal(fit.kind, 'not-enough-data');
    if (fit.kind !== 'not-enough-data') return;
    assert.equal(fit.missing, `modes.${mode}`);
    assert.equal(fit.mode, mode);
    assert.match(
      fit.reason,
      new RegExp(`^the profile lacks modes\\.${mode}, which the what-if model needs: re-run 'ds-analyzer profile`),
    );
  }
  const profile = load();
  profile.modes.cold!.storageReadBytesPerSec = null;
  assert.deepEqual(fitModel(profile), {
    kind: 'not-enough-data',
    missing: 'modes.cold.storageReadBytesPerSec',
    mode: 'cold',
    reason:
      "the profile lacks modes.cold.storageReadBytesPerSec, which the what-if model needs: re-run 'ds-analyzer profile' with the cold mode (it measures storage bandwidth)",
  });
});

test('a profile without its cold mode: fitModel answers not-enough-data unless asked to fit without the fetch stage (whatif: test/whatif/without-cold.test.ts)', () => {
  const profile = load();
  delete profile.modes.cold;
  const expected = {
    kind: 'not-enough-data',
    missing: 'modes.cold',
    mode: 'cold',
    reason: MISSING_TEXT.field('modes.cold', 'cold'),
  };
  assert.deepEqual(fitModel(profile), expected);
  const fit = fitModel(profile, { fetchOptional: true });
  assert.equal(fit.kind, 'fitted');
  if (fit.kind === 'fitted') assert.deepEqual(fit.model.fetchUnmeasured, expected);
  // The query that asks only what the cold mode measures is still not enough data.
  assert.ok(isNotEnoughData(whatif(profile, 'no-cold.json', { cacheBytes: 0 })));
});

test('an unproven mode marks its parameters unproven and says why', () => {
  const profile = load();
  profile.modes.cold!.state.proven = false;
  profile.modes.cold!.state.reason = 'only 40% of consumed bytes read from storage';
  const model = fitOrFail(profile);
  assert.equal(model.parameters.find((p) => p.symbol === 'B_storage')!.proven, false);
  assert.equal(model.parameters.find((p) => p.symbol === 'T_gpu')!.proven, true);
  assert.ok(model.caveats.some((c) => c.includes('40% of consumed bytes')));
});

test('without a histogram the sizes fall back to the mean and the model says so; with one, it uses it', () => {
  const profile = load();
  assert.ok(fitOrFail(profile).caveats.some((c) => c.includes('fileBytesHistogram')));
  profile.dataset.fileBytesHistogram = sizeHistogram(Array.from({ length: 65 }, (_, i) => 100_000 + i * 5000));
  const model = fitOrFail(profile);
  assert.ok(!model.caveats.some((c) => c.includes('fileBytesHistogram')));
  assert.match(model.parameters.find((p) => p.symbol === 'h(M)')!.source, /fileBytesHistogram/);
});

test('more CPUs divide prep time linearly; a fitted eff(c) replaces the assumption', () => {
  const profile = load();
  const model = fitOrFail(profile);
  assert.equal(model.cpuScaling.kind, 'linear');
  const base = { ...baseScenario(model), cacheBytes: model.datasetBytes };
  const t2 = stageTimes(model, base, 1).prep;
  const t4 = stageTimes(model, { ...base, cpus: 4 }, 1).prep;
  assert.ok(Math.abs(t2 / t4 - 2) < 1e-9);
  const fitted = fitOrFail(profile, {
    cpuScaling: {
      kind: 'fitted',
      points: [
        { cpus: 1, eff: 1 },
        { cpus: 2, eff: 1.5 },
        { cpus: 4, eff: 2 },
      ],
      source: 'test sweep',
    },
  });
  assert.equal(effectiveParallelism(fitted.cpuScaling, 3), 1.75);
  assert.ok(!fitted.caveats.some((c) => c.includes('linearly')));
  const slower = stageTimes(fitted, { ...base, cpus: 4 }, 1).prep;
  assert.ok(slower > t4, 'sub-linear curve predicts slower prep than linear');
});

test('N data-parallel accelerators share CPUs and storage: per-rank prep and fetch times scale by N, server throughput is capped', () => {
  const model = fitOrFail(load());
  const base = { ...baseScenario(model), cacheBytes: 0 };
  const one = stageTimes(model, { ...base, gpus: 1 }, 0);
  const four = stageTimes(model, { ...base, gpus: 4 }, 0);
  assert.ok(Math.abs(four.prep / one.prep - 4) < 1e-9);
  assert.ok(Math.abs(four.fetch / one.fetch - 4) < 1e-9);
  assert.equal(four.gpu, one.gpu);
  // Storage-bound: four accelerators do not read faster than one.
  const p1 = predict(model, { ...base, gpus: 1 });
  const p4 = predict(model, { ...base, gpus: 4 });
  assert.equal(p1.bottleneck, 'fetch');
  assert.ok(Math.abs(p4.samplesPerSec - p1.samplesPerSec) / p1.samplesPerSec < 1e-9);
  // Compute-bound (everything cached, many CPUs): throughput scales with accelerators.
  const c1 = predict(model, { ...base, cacheBytes: model.pageCache.wholeBytes, cpus: 64, gpus: 1 });
  const c4 = predict(model, { ...base, cacheBytes: model.pageCache.wholeBytes, cpus: 64, gpus: 4 });
  assert.equal(c1.bottleneck, 'compute');
  assert.ok(Math.abs(c4.samplesPerSec / c1.samplesPerSec - 4) < 1e-9);
});

test('a faster accelerator divides compute time and lowers utilisation when data-bound', () => {
  const model = fitOrFail(load());
  const base = { ...baseScenario(model), cacheBytes: model.datasetBytes };
  const p1 = predict(model, base);
  const p2 = predict(model, { ...base, gpuSpeedup: 2 });
  assert.ok(Math.abs(p1.computeMs / p2.computeMs - 2) < 1e-9);
  assert.equal(p2.samplesPerSec, p1.samplesPerSec, 'prep-bound: no faster');
  assert.ok(p2.acceleratorUtilization < p1.acceleratorUtilization);
});

test('the first epoch is cold; --epochs averages it in; split sums to the iteration', () => {
  const model = fitOrFail(load());
  const base = { ...baseScenario(model), cacheBytes: model.pageCache.wholeBytes };
  const steady = predict(model, base);
  assert.equal(steady.hitRatio, 1);
  assert.ok(steady.firstEpochSec > steady.steadyEpochSec);
  const two = predict(model, { ...base, epochs: 2 });
  assert.ok(Math.abs(two.epochSec - (steady.firstEpochSec + steady.steadyEpochSec) / 2) < 1e-9);
  const one = predict(model, { ...base, epochs: 1 });
  assert.ok(Math.abs(one.epochSec - one.firstEpochSec) < 1e-9);
  fc.assert(
    fc.property(
      fc.double({ min: 0, max: 2, noNaN: true }),
      fc.integer({ min: 1, max: 64 }),
      fc.integer({ min: 1, max: 8 }),
      (f, cpus, gpus) => {
        const p = predict(model, { ...base, cacheBytes: f * model.datasetBytes, cpus, gpus });
        assert.ok(Math.abs(p.computeMs + p.prepStallMs + p.fetchStallMs - p.iterMs) < 1e-9 * p.iterMs);
        assert.ok(p.acceleratorUtilization > 0 && p.acceleratorUtilization <= 1 + 1e-12);
      },
    ),
  );
});

test('cache sweep: throughput never falls with more cache, and MinIO hits at least as often as the page cache', () => {
  const model = fitOrFail(load());
  const rows = cacheSweep(model, baseScenario(model), 20);
  for (let k = 1; k < rows.length; k++) {
    assert.ok(rows[k].pageCacheSamplesPerSec >= rows[k - 1].pageCacheSamplesPerSec - 1e-9);
    assert.ok(rows[k].pageCacheHitRatio >= rows[k - 1].pageCacheHitRatio - 1e-12);
    assert.ok(rows[k].minioHitRatio >= rows[k].pageCacheHitRatio - 1e-12);
    assert.ok(rows[k].minioHitRatio >= rows[k].lruHitRatio - 1e-12);
  }
  assert.equal(rows[0].pageCacheHitRatio, 0);
  // The kernel's page cache holds whole pages: the dataset's bytes hold nearly all of it, not all.
  assert.ok(rows.at(-1)!.pageCacheHitRatio > 0.9);
  assert.ok(model.pageCache.wholeBytes > model.datasetBytes && model.pageCache.wholeBytes < 1.1 * model.datasetBytes);
  assert.equal(model.pageCache.steady(model.pageCache.wholeBytes), 1);
  assert.equal(rows.at(-1)!.lruHitRatio, 1);
});

test('recommendations are the smallest changes: at the value the stall is gone, just below it is not', () => {
  const model = fitOrFail(load());
  const scenario = { ...baseScenario(model), cacheBytes: 0 };
  const recs = recommend(model, scenario);
  for (const policy of ['page-cache', 'minio'] as const) {
    const rec = recs.find((r) => r.kind === 'cache' && r.cachePolicy === policy)!;
    assert.ok(rec.value !== null && rec.value > 0, policy);
    const at = predict(model, { ...scenario, cachePolicy: policy, cacheBytes: rec.value });
    // The page cache's value leaves 5% slack above the edge where the stall returns.
    const edge = policy === 'page-cache' ? rec.edgeBytes! : rec.value;
    // ...or more, where LRU's late misses need it: the pace taken per eighth of the epoch then just holds.
    if (policy === 'page-cache') {
      const byMean = Math.min(model.datasetBytes, Math.ceil(edge * 1.05));
      const byParts = smallestCacheWithoutLateStall(model, scenario);
      assert.equal(rec.value, Math.max(byMean, byParts ?? byMean));
    }
    assert.ok(
      storageBusy(model, scenario, predict(model, { ...scenario, cachePolicy: policy, cacheBytes: edge })) <=
        MAX_STORAGE_UTILISATION + 1e-9,
    );
    const below = predict(model, { ...scenario, cachePolicy: policy, cacheBytes: edge * 0.97 });
    assert.ok(at.fetchStallMs < 1e-6 * at.iterMs, `${policy}: no fetch stall at ${rec.value}`);
    // The smallest: just below it, storage would be busier than the 90% the recommendation leaves it.
    assert.ok(
      storageBusy(model, scenario, at) <= MAX_STORAGE_UTILISATION + 1e-9,
      `${policy}: storage under 90% busy at the value`,
    );
    assert.ok(storageBusy(model, scenario, below) > MAX_STORAGE_UTILISATION, `${policy}: busier just below`);
  }
  const lru = recs.find((r) => r.cachePolicy === 'page-cache')!.value!;
  const minio = recs.find((r) => r.cachePolicy === 'minio')!.value!;
  assert.ok(lru > minio, 'LRU needs more cache than a cache that never evicts');

  const cpus = recs.find((r) => r.kind === 'cpus')!;
  const withCache = { ...scenario, cacheBytes: model.datasetBytes };
  assert.equal(predict(model, { ...withCache, cpus: cpus.value! }).prepStallMs, 0);
  assert.ok(predict(model, { ...withCache, cpus: cpus.value! - 1 }).prepStallMs > 0);

  const storage = recs.find((r) => r.kind === 'storage')!;
  const fast = predict(model, { ...scenario, storageBytesPerSec: storage.value! * 1.0001 });
  const slow = predict(model, { ...scenario, storageBytesPerSec: storage.value! * 0.97 });
  assert.ok(fast.fetchStallMs < 1e-6 * fast.iterMs);
  assert.ok(
    storageBusy(model, fast.scenario, fast) <= MAX_STORAGE_UTILISATION &&
      storageBusy(model, slow.scenario, slow) > MAX_STORAGE_UTILISATION,
  );
  assert.match(storage.text, /removes the fetch stall/);
});

test('the misses come late in each epoch: the hit ratio by eighth falls, averages to the mean, and the recommendation covers the last eighths', () => {
  const model = fitOrFail(load());
  const cache = 0.9 * model.datasetBytes;
  const parts = model.pageCache.steadyByPart(cache)!;
  assert.equal(parts.length, 8);
  assert.ok(parts[0] > parts[7] + 0.3, `early ${parts[0]} vs late ${parts[7]}`);
  const mean = parts.reduce((a, b) => a + b, 0) / parts.length;
  assert.ok(Math.abs(mean - model.pageCache.steady(cache)) < 0.02, 'equal parts average to the epoch');
  const scenario = { ...baseScenario(model), cacheBytes: 0 };
  const late = smallestCacheWithoutLateStall(model, scenario);
  assert.ok(late !== null && late > 0 && late <= model.datasetBytes, `late ${late}`);
  assert.deepEqual(
    model.pageCache.steadyByPart(model.pageCache.wholeBytes),
    Array(8).fill(1),
    'a cache of the whole dataset, in pages, hits everything in every part',
  );
  // Just below it, the pace taken per eighth shows a stall beyond the negligible one.
  const perPart = (bytes: number) => {
    const hs = model.pageCache.steadyByPart(bytes)!;
    return (
      hs.reduce((sum, h) => {
        const t = stageTimes(model, scenario, h);
        return sum + Math.max(t.gpu, dataTime(t.prep, t.fetch, model.fetchPrepSerial));
      }, 0) / hs.length
    );
  };
  const t0 = stageTimes(model, scenario, 0);
  const pace = Math.max(t0.gpu, t0.prep);
  assert.ok(perPart(late!) <= pace * 1.02 + 1e-12);
  assert.ok(perPart(late! * 0.98) > pace * 1.02);
});
