import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IterationSummary } from '../../../src/schema/profile.js';
import { measuredModes, proven, reallySlower } from '../../../src/whatif/fit/modes.js';
import { loadProfile, modesOf } from './fixture.js';

test('measuredModes: the three modes, with a caveat for each one that did not prove its cache state', () => {
  const profile = loadProfile();
  const fit = measuredModes(profile);
  assert.equal(fit.kind, 'fitted');
  if (fit.kind !== 'fitted') return;
  assert.deepEqual(Object.keys(fit.value), ['synthetic', 'cached', 'cold']);
  assert.deepEqual(fit.caveats, []);
  profile.modes.cold!.state = { ...profile.modes.cold!.state, proven: false, reason: 'half the dataset was resident' };
  const unproven = measuredModes(profile);
  assert.equal(unproven.kind === 'fitted' && unproven.caveats.length, 1);
  assert.match(
    unproven.kind === 'fitted' ? unproven.caveats[0] : '',
    /^cold mode did not prove its cache state \(half the dataset was resident\)/,
  );
});

test('measuredModes: the first mode missing, or measured without a summary, is not enough data', () => {
  const profile = loadProfile();
  profile.modes.cached!.summary = null;
  delete profile.modes.cold;
  assert.deepEqual(
    { ...measuredModes(profile), reason: '' },
    { kind: 'not-enough-data', missing: 'modes.cached.summary', mode: 'cached', reason: '' },
  );
});

test('proven: every mode proved its state and ran to its end', () => {
  const { synthetic, cached } = modesOf(loadProfile());
  assert.equal(proven(synthetic, cached), true);
  assert.equal(proven(synthetic, { ...cached, status: 'interrupted' }), false);
  assert.equal(proven({ ...synthetic, state: { ...synthetic.state, proven: false } }), false);
});

test('reallySlower: beyond the combined noise of both and at least 3% of the slower mode', () => {
  const base = modesOf(loadProfile()).synthetic.summary;
  const at = (mean: number, halfWidth: number | null): IterationSummary => ({
    ...base,
    iterMs: { mean, halfWidth, proven: true },
  });
  assert.equal(reallySlower(at(110, 3), at(100, 3)), true, '10 ms apart, noise ±4.2');
  assert.equal(reallySlower(at(104, 3), at(100, 3)), false, '4 ms apart, within noise ±4.2');
  assert.equal(reallySlower(at(102, 0.1), at(100, 0.1)), false, 'beyond noise, but under 3%');
  // A mode without an interval counts as exact: the other's noise still decides.
  assert.equal(reallySlower(at(104, null), at(100, 3)), true);
  assert.equal(reallySlower(at(102.5, null), at(100, 3)), false);
  assert.equal(reallySlower(at(100, 1), at(110, 1)), false, 'faster is not slower');
});
