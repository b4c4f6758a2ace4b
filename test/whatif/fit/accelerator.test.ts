import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fitAccelerator } from '../../../src/whatif/fit/accelerator.js';
import { loadProfile, modesOf, symbols, fittedValue } from './fixture.js';

test('fitAccelerator: compute per iteration and batch from the synthetic mode, ranks from the cached and cold modes', () => {
  const modes = modesOf(loadProfile());
  const fit = fittedValue(fitAccelerator(modes));
  assert.equal(fit.value.computeSecPerIter, modes.synthetic.summary.iterMs.mean / 1000);
  assert.equal(fit.value.samplesPerIter, 4);
  assert.equal(fit.value.profiledRanks, 1);
  assert.deepEqual(symbols(fit), ['T_gpu', 'b', 'R']);
  assert.equal(fit.parameters[0].value, modes.synthetic.summary.iterMs.mean);
  assert.deepEqual(fit.caveats, []);
  const twoRanks = {
    ...modes,
    cold: { ...modes.cold, ranks: [...modes.cold.ranks, { ...modes.cold.ranks[0], rank: 1 }] },
  };
  assert.equal(fittedValue(fitAccelerator(twoRanks)).value.profiledRanks, 2);
});

test('fitAccelerator: a synthetic mode that measured no time is not enough data', () => {
  const modes = modesOf(loadProfile());
  const noTime = {
    ...modes,
    synthetic: {
      ...modes.synthetic,
      summary: { ...modes.synthetic.summary, iterMs: { mean: 0, halfWidth: null, proven: true } },
    },
  };
  const fit = fitAccelerator(noTime);
  assert.equal(fit.kind, 'not-enough-data');
  assert.equal(fit.kind === 'not-enough-data' && fit.missing, 'modes.synthetic.summary.iterMs');
});
