import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../src/analysis/split.js';
import { three } from './modes.js';

test('a cached mode on a resident subset adds a caveat naming the subset, why, and why the prep stall holds', () => {
  const modes = three(50, 80, 120);
  const plain = analyze(modes);
  assert.ok(!plain.caveats.some((c) => c.includes('resident subset')), 'no subset, no caveat');
  modes.cached!.subset = {
    reason: 'does-not-fit',
    how: 'a seeded random 30% of the files',
    files: 350,
    bytes: 350 * 262144,
    datasetFiles: 2240,
    datasetBytes: 2240 * 262144,
    seed: 1,
    budgetBytes: 431 * 2 ** 20,
    warmSec: 0.4,
    jobSamples: 350,
  };
  const caveat = analyze(modes).caveats.find((c) => c.includes('resident subset'));
  assert.equal(
    caveat,
    'cached mode on a resident subset: 350 of 2240 files (87.5 MiB of 560.0 MiB), because the dataset does not fit in the memory the job has; ' +
      'the prep stall still holds, since pre-processing costs the same per sample whichever files are read, ' +
      'and the subset is a seeded random sample of the files (mean file 256.0 KiB, dataset 256.0 KiB)',
  );
  assert.equal(analyze(modes).prepStallMs?.mean, plain.prepStallMs?.mean, 'the figures themselves do not change');
});
