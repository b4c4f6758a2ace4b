import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { estimateResidency } from '../../../src/system/keepers/residency-estimate.js';
import { mulberry32 } from '../../../src/random.js';

describe('residency estimate', () => {
  const sizes = Array.from({ length: 1000 }, (_, k) => 100 + (k % 7) * 50);
  const resident = (k: number): number => (k < 200 ? sizes[k] : k % 2 === 0 ? sizes[k] / 2 : 0);
  const total = (pick: (k: number) => number) => sizes.reduce((sum, _, k) => sum + pick(k), 0);
  const datasetBytes = total((k) => sizes[k]);
  const held = Array.from({ length: 200 }, (_, k) => k);

  it('reads every file, exactly, when each group fits in the sample', () => {
    let measured = 0;
    const estimate = estimateResidency({
      files: 1000, datasetBytes, held, sampleFiles: 1000,
      sizeOf: (k) => sizes[k], residentOf: (k) => (measured++, resident(k)), random: mulberry32(1),
    });
    assert.deepEqual(estimate, { residentBytes: total(resident), measuredFiles: 1000, exact: true });
    assert.equal(measured, 1000);
  });

  it('samples the larger group and scales it by bytes, within four standard errors (10%)', () => {
    for (const seed of [1, 2, 3]) {
      const estimate = estimateResidency({
        files: 1000, datasetBytes, held, sampleFiles: 400,
        sizeOf: (k) => sizes[k], residentOf: resident, random: mulberry32(seed),
      });
      assert.equal(estimate.exact, false);
      assert.equal(estimate.measuredFiles, 200 + 400);
      const truth = total(resident);
      assert.ok(Math.abs(estimate.residentBytes - truth) / truth < 0.1, `${estimate.residentBytes} against ${truth}`);
      // The held files were read whole: their share is exact.
      assert.ok(estimate.residentBytes >= total((k) => (k < 200 ? sizes[k] : 0)));
    }
  });

  it('never measures a held file as one of the others', () => {
    const seen = new Set<number>();
    estimateResidency({
      files: 1000, datasetBytes, held, sampleFiles: 300,
      sizeOf: (k) => sizes[k], residentOf: (k) => (seen.add(k), 0), random: mulberry32(9),
    });
    for (const k of seen) assert.ok(k >= 200 || held.includes(k));
    assert.equal([...seen].filter((k) => k < 200).length, 200);
  });
});
