import { test } from 'node:test';
import assert from 'node:assert/strict';
import { continuedLine } from '../../src/report/cost-line.js';

const cost = {
  blocksSec: 95.2,
  syntheticSec: 20.5,
  snapshotSec: 0.31,
  snapshotBytes: 3 * 2 ** 20,
  preparationSec: 12,
  coldExtraSec: 4.25,
  extraSec: 37.06,
  refusedBlocks: [],
};

test('--continue: the blocks, the run they rode, and what they added to it, part by part', () => {
  assert.equal(
    continuedLine({ ...cost, runSec: 3600, jobExitCode: 0, jobSignal: null }),
    "rode the real run (--continue): the blocks took 95.2 s of the run's 3600.0 s, adding at most 37.1 s " +
      '(synthetic blocks 20.5 s, snapshots 0.31 s of 3.0 MiB, setting states 12.0 s, cold blocks over the cached ' +
      'pace 4.3 s)',
  );
});

test('--continue: a run still training, and the synthetic blocks left out', () => {
  const line = continuedLine({ ...cost, refusedBlocks: [{ label: 'synthetic', reason: 'too big' }] });
  assert.match(line, /took 95\.2 s \(the run trains on\)/);
  assert.match(line, /; left out: synthetic$/);
});
