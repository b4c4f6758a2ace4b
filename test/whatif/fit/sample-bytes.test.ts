import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fitSampleBytes } from '../../../src/whatif/fit/sample-bytes.js';
import { loadProfile, modesOf, symbols } from './fixture.js';

test('fitSampleBytes: s from the bytes the cold mode consumed per sample, a from its read fraction', () => {
  const profile = loadProfile();
  const modes = modesOf(profile);
  const fit = fitSampleBytes(profile, modes);
  const samples = modes.cold.ranks.flatMap((r) => r.iterations).reduce((n, it) => n + it.samples, 0);
  assert.equal(fit.value.bytesPerSample, modes.cold.state.consumedBytes / samples);
  assert.equal(fit.value.readAmplification, modes.cold.state.readFraction);
  assert.deepEqual(symbols(fit), ['s', 'a']);
  assert.equal(fit.parameters[1].proven, true);
});

test('fitSampleBytes: without a read fraction a = 1, assumed and unproven; without consumed bytes s is the mean file size', () => {
  const profile = loadProfile();
  const modes = modesOf(profile);
  const noBytes = (m: typeof modes.cold) => ({ ...m, state: { ...m.state, consumedBytes: 0, readFraction: null } });
  const fit = fitSampleBytes(profile, { ...modes, cached: noBytes(modes.cached), cold: noBytes(modes.cold) });
  assert.equal(fit.value.bytesPerSample, profile.dataset.meanFileBytes);
  assert.equal(fit.value.readAmplification, 1);
  assert.match(fit.parameters[1].source, /^assumed 1/);
  assert.equal(fit.parameters[1].proven, false);
});
