import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Profile } from '../../../src/schema/profile.js';
import { fitStorage, type StorageFitInputs } from '../../../src/whatif/fit/storage.js';
import { dataTime, PERFECT_OVERLAP } from '../../../src/whatif/overlap.js';
import { loadProfile, modesOf, symbols, fittedValue } from './fixture.js';

/** The stage times of the stored profile as the fitters before storage give them (one rank, a = readFraction). */
function inputsOf(profile: Profile): StorageFitInputs {
  const { synthetic, cached, cold } = modesOf(profile);
  const cachedSec = cached.summary.iterMs.mean / 1000 / cached.summary.samplesPerIter;
  const samples = cold.ranks.flatMap((r) => r.iterations).reduce((n, it) => n + it.samples, 0);
  return {
    computeSec: synthetic.summary.iterMs.mean / 1000 / synthetic.summary.samplesPerIter,
    // The fixture's cached mode was prep-bound: prep per sample is its time per sample.
    prepSec: cachedSec,
    missBytesPerSample: (cold.state.readFraction ?? 1) * (cold.state.consumedBytes / samples),
    cachedTime: cached.summary,
  };
}

test('fitStorage: a cold mode that read at its throttle was storage-bound: B is what it read, σ = 0 assumed, bounded by its interval', () => {
  const profile = loadProfile();
  const fit = fittedValue(fitStorage(profile, modesOf(profile), inputsOf(profile)));
  assert.equal(fit.value.storageBytesPerSec, profile.modes.cold!.storageReadBytesPerSec);
  assert.equal(fit.value.storageIsLowerBound, false);
  assert.equal(fit.value.fetchPrepSerial, PERFECT_OVERLAP);
  assert.equal(fit.value.overlapMeasured, false);
  assert.ok(fit.value.serialUpperBound > 0 && fit.value.serialUpperBound <= 1, `σ bound ${fit.value.serialUpperBound}`);
  assert.deepEqual(symbols(fit), ['B_storage', 'σ']);
  assert.match(fit.parameters[0].source, /cold mode was storage-bound/);
  assert.match(fit.parameters[1].source, /assumed: not measured \(profile --overlap measures it\)$/);
  assert.deepEqual(fit.caveats, []);
});

test('fitStorage: a cold mode that waited on storage well below its throttle fits σ, with B the throttle, reproducing the cold time', () => {
  const profile = loadProfile();
  profile.options.storageBwBytesPerSec = profile.modes.cold!.storageReadBytesPerSec! / 0.7;
  const inputs = inputsOf(profile);
  const fit = fittedValue(fitStorage(profile, modesOf(profile), inputs));
  assert.equal(fit.value.storageBytesPerSec, profile.options.storageBwBytesPerSec);
  assert.equal(fit.value.overlapMeasured, true);
  assert.equal(fit.value.serialUpperBound, fit.value.fetchPrepSerial);
  const cold = profile.modes.cold!.summary!;
  const coldSec = cold.iterMs.mean / 1000 / cold.samplesPerIter;
  const modelled = Math.max(
    inputs.computeSec,
    dataTime(inputs.prepSec, inputs.missBytesPerSample / fit.value.storageBytesPerSec, fit.value.fetchPrepSerial),
  );
  assert.ok(Math.abs(modelled - coldSec) / coldSec < 1e-6, `${modelled} vs ${coldSec}`);
  assert.match(fit.parameters[0].source, /alternated reading and pre-processing/);
});

test('fitStorage: a cold mode no slower than the cached one on unthrottled storage: its rate is a lower bound, and said', () => {
  const profile = loadProfile();
  profile.options.storageBwBytesPerSec = null;
  const inputs = { ...inputsOf(profile), cachedTime: profile.modes.cold!.summary! };
  const fit = fittedValue(fitStorage(profile, modesOf(profile), inputs));
  assert.equal(fit.value.storageIsLowerBound, true);
  assert.equal(fit.parameters[0].note, 'lower bound: storage was not the limit in the cold mode');
  assert.match(fit.caveats.join('\n'), /bandwidth is a lower bound/);
});

test('fitStorage: a proven overlap probe fits σ and B together; an unproven one is not used', () => {
  const profile = loadProfile();
  const inputs = inputsOf(profile);
  const cold = profile.modes.cold!;
  const fetchSec = inputs.missBytesPerSample / cold.storageReadBytesPerSec!;
  const share = 0.5;
  const probeSec = Math.max(inputs.computeSec, dataTime(inputs.prepSec, (1 - share) * fetchSec, 0.5));
  const iterMs = probeSec * 1000 * cold.summary!.samplesPerIter;
  profile.overlapProbe = {
    ...cold,
    summary: { ...cold.summary!, iterMs: { mean: iterMs, halfWidth: 0.01 * iterMs, proven: true } },
    residentShare: share,
  };
  const fit = fittedValue(fitStorage(profile, modesOf(profile), inputs));
  assert.equal(fit.value.overlapMeasured, true);
  assert.ok(fit.value.fetchPrepSerial > 0.2, `σ = ${fit.value.fetchPrepSerial}`);
  assert.match(fit.parameters[1].source, /overlap probe \(cold, 50% of the dataset held resident\)/);
  profile.overlapProbe.state = { ...profile.overlapProbe.state, proven: false };
  assert.equal(fittedValue(fitStorage(profile, modesOf(profile), inputs)).value.overlapMeasured, false);
});

test('fitStorage: a cold mode without a storage read rate is not enough data', () => {
  const profile = loadProfile();
  profile.modes.cold!.storageReadBytesPerSec = 0;
  const fit = fitStorage(profile, modesOf(profile), inputsOf(profile));
  assert.equal(fit.kind === 'not-enough-data' && fit.missing, 'modes.cold.storageReadBytesPerSec');
});
