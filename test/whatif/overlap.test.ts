import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { ProfileSchema, type Profile } from '../../src/schema/profile.js';
import { predict, selfCheck, baseScenario, stageTimes } from '../../src/whatif/model.js';
import { fitOrFail } from './fit-or-fail.js';
import { dataTime, fitOverlap, fitOverlapJoint, PERFECT_OVERLAP } from '../../src/whatif/overlap.js';
import { MAX_STORAGE_UTILISATION, recommend } from '../../src/whatif/recommend.js';

const FIXTURE = new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url);
const load = (): Profile => ProfileSchema.parse(JSON.parse(readFileSync(FIXTURE, 'utf8')));

test('the data time runs from the max of prep and fetch (σ = 0) to their sum (σ = 1), growing with σ', () => {
  assert.equal(dataTime(3, 2, PERFECT_OVERLAP), 3);
  assert.ok(Math.abs(dataTime(3, 2, 1) - 5) < 1e-12);
  assert.equal(dataTime(0, 0, 0.5), 0);
  fc.assert(
    fc.property(
      fc.double({ min: 1e-4, max: 1, noNaN: true }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      fc.double({ min: 0.02, max: 0.98, noNaN: true }),
      (prep, fetch, serial) => {
        const t = dataTime(prep, fetch, serial);
        return (
          t >= Math.max(prep, fetch) - 1e-12 &&
          t <= prep + fetch + 1e-12 &&
          dataTime(prep, fetch, serial + 0.01) >= t - 1e-12
        );
      },
    ),
  );
});

test('fitOverlap recovers σ from a cold time; perfect overlap when the max explains it; null when even the sum does not', () => {
  fc.assert(
    fc.property(
      fc.double({ min: 1e-3, max: 1, noNaN: true }),
      fc.double({ min: 0.3, max: 3, noNaN: true }),
      fc.double({ min: 0.05, max: 1, noNaN: true }),
      (prep, ratio, serial) => {
        const fetch = prep * ratio;
        const cold = dataTime(prep, fetch, serial);
        fc.pre(cold > Math.max(prep, fetch) * 1.03);
        const fitted = fitOverlap({ computeSec: 0, prepSec: prep, fetchSec: fetch, coldSec: cold });
        return fitted !== null && Math.abs(dataTime(prep, fetch, fitted) - cold) < 1e-9 * cold;
      },
    ),
  );
  assert.equal(fitOverlap({ computeSec: 1, prepSec: 3, fetchSec: 2, coldSec: 3.01 }), PERFECT_OVERLAP);
  assert.equal(fitOverlap({ computeSec: 1, prepSec: 3, fetchSec: 2, coldSec: 6 }), null);
});

/** The fixture with a storage throttle the cold mode read well below, waiting on fetch all the same. */
function throttledBelowItsLimit(readShare: number): Profile {
  const profile = load();
  const cold = profile.modes.cold!;
  profile.options.storageBwBytesPerSec = cold.storageReadBytesPerSec! / readShare;
  return profile;
}

test('a cold mode that waited on storage yet read below its throttle fits σ, takes the throttle as B, and still reproduces the cold mode', () => {
  const profile = throttledBelowItsLimit(0.7);
  const model = fitOrFail(profile);
  assert.ok(model.fetchPrepSerial > 0 && model.fetchPrepSerial <= 1, `σ = ${model.fetchPrepSerial}`);
  assert.equal(model.storageBytesPerSec, profile.options.storageBwBytesPerSec);
  const sigma = model.parameters.find((p) => p.symbol === 'σ')!;
  assert.match(sigma.source, /fitted/);
  assert.match(model.parameters.find((p) => p.symbol === 'B_storage')!.source, /alternated reading and pre-processing/);
  const cold = selfCheck(model, profile).find((c) => c.mode === 'cold')!;
  assert.ok(
    Math.abs(cold.predictedIterMs - cold.measuredIterMs) / cold.measuredIterMs < 0.03,
    `${cold.predictedIterMs} vs ${cold.measuredIterMs}`,
  );

  // Read at its throttle: storage was the limit, nothing to fit.
  const saturated = fitOrFail(throttledBelowItsLimit(0.97));
  assert.equal(saturated.fetchPrepSerial, PERFECT_OVERLAP);
  assert.match(saturated.parameters.find((p) => p.symbol === 'σ')!.source, /perfect overlap/);
});

test('with fetch and prep partly in series the recommended cache leaves a stall under 2% and storage under 90% busy', () => {
  const model = fitOrFail(throttledBelowItsLimit(0.7));
  const scenario = { ...baseScenario(model), cacheBytes: 0 };
  for (const rec of recommend(model, scenario).filter((r) => r.kind === 'cache' || r.kind === 'storage')) {
    assert.ok(rec.value !== null && rec.value > 0, rec.text);
    const at =
      rec.kind === 'cache'
        ? { ...scenario, cachePolicy: rec.cachePolicy!, cacheBytes: rec.value }
        : { ...scenario, storageBytesPerSec: rec.value };
    const p = predict(model, { ...at, epochs: null });
    const t = stageTimes(model, at, p.steadyHitRatio);
    const pace = Math.max(t.gpu, t.prep);
    assert.ok(
      p.fetchStallMs <= 0.02 * pace * model.samplesPerIter * 1000 + 1e-9,
      `${rec.text}: stall ${p.fetchStallMs} ms`,
    );
    assert.ok(
      t.fetch <= MAX_STORAGE_UTILISATION * pace * (1 + 1e-9),
      `${rec.text}: storage busy ${(t.fetch / pace).toFixed(3)}`,
    );
    assert.notEqual(p.bottleneck, 'fetch');
  }
});

test('where the overlap was not measured, a cache recommendation also gives the cache that removes the stall with reads and prep in series', () => {
  // A saturated cold mode: σ is assumed, not measured.
  const saturated = fitOrFail(throttledBelowItsLimit(0.97));
  assert.equal(saturated.overlapMeasured, false);
  const scenario = { ...baseScenario(saturated), cacheBytes: 0 };
  for (const rec of recommend(saturated, scenario).filter((r) => r.kind === 'cache')) {
    assert.ok(rec.value !== null && rec.value > 0, rec.text);
    assert.ok(rec.ifSerialBytes === null || rec.ifSerialBytes! >= rec.value!, `${rec.text}`);
    assert.match(
      rec.text,
      /This assumes reads overlap pre-processing, which the profile did not measure \(profile --overlap measures it\)/,
    );
    if (rec.ifSerialBytes != null) {
      // At the largest σ the cold mode allows, that cache leaves a stall under 2%.
      const serialModel = { ...saturated, fetchPrepSerial: saturated.serialUpperBound };
      const at = { ...scenario, cachePolicy: rec.cachePolicy!, cacheBytes: rec.ifSerialBytes, epochs: null };
      const t = stageTimes(serialModel, at, predict(serialModel, at).steadyHitRatio);
      assert.ok(
        predict(serialModel, at).fetchStallMs <=
          0.02 * Math.max(t.gpu, t.prep) * serialModel.samplesPerIter * 1000 + 1e-9,
      );
    }
  }
  // The bound is the largest σ the cold mode allows: the model with it still reproduces the cold mode within its 95%
  // interval.
  assert.ok(saturated.serialUpperBound > 0 && saturated.serialUpperBound < 1, `σ max ${saturated.serialUpperBound}`);
  const coldProfile = throttledBelowItsLimit(0.97).modes.cold!.summary!;
  const atBound = selfCheck(
    { ...saturated, fetchPrepSerial: saturated.serialUpperBound },
    throttledBelowItsLimit(0.97),
  ).find((c) => c.mode === 'cold')!;
  assert.ok(
    atBound.predictedIterMs <= coldProfile.iterMs.mean + coldProfile.iterMs.halfWidth! + 1e-6,
    `${atBound.predictedIterMs} vs ${coldProfile.iterMs.mean} ± ${coldProfile.iterMs.halfWidth}`,
  );
  // σ measured: one answer, no bound.
  const measured = fitOrFail(throttledBelowItsLimit(0.7));
  assert.equal(measured.overlapMeasured, true);
  for (const rec of recommend(measured, { ...baseScenario(measured), cacheBytes: 0 }).filter(
    (r) => r.kind === 'cache',
  )) {
    assert.equal(rec.ifSerialBytes, undefined);
    assert.doesNotMatch(rec.text, /This assumes reads overlap/);
  }
});

test('the overlap probe measures σ where the cold mode could not: fitted from its time, and the cache answer needs no bound', () => {
  const profile = throttledBelowItsLimit(0.97);
  const model0 = fitOrFail(profile);
  assert.equal(model0.overlapMeasured, false);
  assert.match(
    model0.parameters.find((p) => p.symbol === 'σ')!.source,
    /assumed: not measured \(profile --overlap measures it\)/,
  );
  // A probe at half the dataset resident that ran at the data time of σ = 0.5.
  const t = stageTimes(model0, { ...baseScenario(model0), cacheBytes: 0 }, 0);
  const share = 0.5;
  const probeSec = Math.max(t.gpu, dataTime(t.prep, (1 - share) * t.fetch, 0.5));
  const cold = profile.modes.cold!;
  const iterMs = probeSec * 1000 * cold.summary!.samplesPerIter;
  profile.overlapProbe = {
    ...cold,
    summary: { ...cold.summary!, iterMs: { mean: iterMs, halfWidth: 0.01 * iterMs, proven: true } },
    state: { ...cold.state, proven: true, reason: 'test' },
    residentShare: share,
  };
  const model = fitOrFail(ProfileSchema.parse(profile));
  assert.equal(model.overlapMeasured, true);
  assert.ok(model.fetchPrepSerial > 0.2 && model.fetchPrepSerial < 1, `σ = ${model.fetchPrepSerial}`);
  assert.match(
    model.parameters.find((p) => p.symbol === 'σ')!.source,
    /the cold mode and the overlap probe \(cold, 50% of the dataset held resident\)/,
  );
  // σ and B fitted together reproduce both runs: the cold mode, and the probe as a never-evicting cache of half the
  // dataset.
  const coldCheck = selfCheck(model, profile).find((c) => c.mode === 'cold')!;
  assert.ok(
    Math.abs(coldCheck.predictedIterMs - coldCheck.measuredIterMs) / coldCheck.measuredIterMs < 0.01,
    `cold ${coldCheck.predictedIterMs} vs ${coldCheck.measuredIterMs}`,
  );
  const atProbe = predict(model, {
    ...baseScenario(model),
    cachePolicy: 'minio',
    cacheBytes: share * model.datasetBytes,
    epochs: null,
  });
  assert.ok(Math.abs(atProbe.iterMs - iterMs) / iterMs < 0.01, `probe ${atProbe.iterMs} vs ${iterMs}`);
  for (const rec of recommend(model, { ...baseScenario(model), cacheBytes: 0 }).filter((r) => r.kind === 'cache')) {
    assert.equal(rec.ifSerialBytes, undefined, rec.text);
  }
  // An unproven probe is not used.
  profile.overlapProbe.state = { ...profile.overlapProbe.state, proven: false };
  assert.equal(fitOrFail(profile).overlapMeasured, false);
});

test('the joint fit recovers σ and the fetch time from a cold time and a probe time', () => {
  fc.assert(
    fc.property(
      fc.double({ min: 1e-3, max: 1, noNaN: true }),
      fc.double({ min: 1.5, max: 4, noNaN: true }),
      fc.double({ min: 0.05, max: 0.95, noNaN: true }),
      fc.double({ min: 0.2, max: 0.8, noNaN: true }),
      (prep, ratio, serial, share) => {
        const fetch = prep * ratio;
        const coldSec = dataTime(prep, fetch, serial);
        const probeSec = dataTime(prep, (1 - share) * fetch, serial);
        const fitted = fitOverlapJoint({ computeSec: 0, prepSec: prep, coldSec, probeSec, share });
        return (
          fitted !== null && Math.abs(fitted.serial - serial) < 1e-3 && Math.abs(fitted.fetchSec - fetch) < 1e-3 * fetch
        );
      },
    ),
  );
  // A cold mode no slower than prep has no fetch to take apart.
  assert.equal(fitOverlapJoint({ computeSec: 0, prepSec: 2, coldSec: 2, probeSec: 2, share: 0.5 }), null);
  // A probe as fast as the max of the stages: perfect overlap.
  assert.equal(
    fitOverlapJoint({ computeSec: 0, prepSec: 1, coldSec: 3, probeSec: 1.5, share: 0.5 })!.serial,
    PERFECT_OVERLAP,
  );
});
