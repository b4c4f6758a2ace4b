import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fitSampleBytes } from '../../../src/whatif/fit/sample-bytes.js';
import { loadProfile, modesOf, symbols } from './fixture.js';

test('fitSampleBytes: s from the bytes the cold mode consumed per sample, a from its read fraction', () => {
  const profile = loadProfile();
  const modes = modesOf(profile);
  const fit = fitSampleBytes(profile, modes);
  // An older profile without consumedSamples: the samples after each rank's warm-up, the window consumedBytes covers.
  assert.equal(modes.cold.state.consumedSamples, undefined);
  const samples = modes.cold.ranks
    .flatMap((r) => r.iterations.slice(r.summary!.warmupIterations))
    .reduce((n, it) => n + it.samples, 0);
  assert.ok(modes.cold.ranks[0].summary!.warmupIterations > 0);
  assert.equal(fit.value.bytesPerSample, modes.cold.state.consumedBytes / samples);
  assert.equal(fit.value.readAmplification, modes.cold.state.readFraction);
  assert.deepEqual(symbols(fit), ['s', 'a']);
  assert.equal(fit.parameters[1].proven, true);
});

test('fitSampleBytes: s counts the samples of the window the consumed bytes cover, not the warm-up too', () => {
  const profile = loadProfile();
  const modes = modesOf(profile);
  // A pooled PyTorch profile: 104 iterations of 32, of which 30 were warm-up; the window held 74 (2,368 samples) of
  // 77.4 KiB.
  const state = { ...modes.cold.state, consumedBytes: 2368 * 79_260, consumedSamples: 2368 };
  const fit = fitSampleBytes(profile, { ...modes, cold: { ...modes.cold, state } });
  assert.equal(fit.value.bytesPerSample, 79_260);
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

test("fitSampleBytes: a read excess the loader could have in flight at the windows' ends is taken as 1; a larger one is kept", () => {
  const profile = loadProfile();
  const modes = modesOf(profile);
  const b = modes.cold.summary.samplesPerIter;
  const loader = { workers: 2, prefetchFactor: 2 };
  const cold = (readFraction: number, consumedSamples: number) => ({
    ...modes.cold,
    ranks: modes.cold.ranks.map((r) => ({ ...r, loader })),
    // One run: its window's end alone.
    passes: undefined,
    state: { ...modes.cold.state, readFraction, consumedSamples },
  });
  // 2 workers x 2 batches x b samples in flight (4 b); 5% of 40 b samples is 2 b: within it.
  const within = fitSampleBytes(profile, { ...modes, cold: cold(1.05, 40 * b) });
  assert.equal(within.value.readAmplification, 1);
  assert.equal(
    within.parameters[1].note,
    `read 1.050: the excess is within the ${4 * b} samples the loader could hold read at the windows' ends, taken as 1`,
  );
  // 50% of 40 b samples is 20 b: more than any loader here held, so it is the job's own amplification (read-ahead,
  // re-reads).
  const beyond = fitSampleBytes(profile, { ...modes, cold: cold(1.5, 40 * b) });
  assert.equal(beyond.value.readAmplification, 1.5);
  assert.equal(beyond.parameters[1].note, undefined);
  // Without the loader's settings nothing bounds the excess: kept.
  const unknown = fitSampleBytes(profile, {
    ...modes,
    cold: { ...cold(1.05, 40 * b), ranks: modes.cold.ranks.map((r) => ({ ...r, loader: undefined })) },
  });
  assert.equal(unknown.value.readAmplification, 1.05);
});
