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
      files: 1000,
      datasetBytes,
      held,
      sampleFiles: 1000,
      sizeOf: (k) => sizes[k],
      residentOf: (k) => (measured++, resident(k)),
      random: mulberry32(1),
    });
    assert.deepEqual(estimate, { residentBytes: total(resident), measuredFiles: 1000, exact: true });
    assert.equal(measured, 1000);
  });

  it('samples the larger group and scales it by bytes, within four standard errors (10%)', () => {
    for (const seed of [1, 2, 3]) {
      const estimate = estimateResidency({
        files: 1000,
        datasetBytes,
        held,
        sampleFiles: 400,
        sizeOf: (k) => sizes[k],
        residentOf: resident,
        random: mulberry32(seed),
      });
      assert.equal(estimate.exact, false);
      assert.equal(estimate.measuredFiles, 200 + 400);
      const truth = total(resident);
      assert.ok(Math.abs(estimate.residentBytes - truth) / truth < 0.1, `${estimate.residentBytes} against ${truth}`);
    }
  });

  it('never measures a held file as one of the others', () => {
    const calls = new Map<number, number>();
    estimateResidency({
      files: 1000,
      datasetBytes,
      held,
      sampleFiles: 300,
      sizeOf: (k) => sizes[k],
      residentOf: (k) => (calls.set(k, (calls.get(k) ?? 0) + 1), 0),
      random: mulberry32(9),
    });
    // Each held file is read once, in its own group; the sample of the others draws 300 times (with replacement), never
    // a held file.
    for (let k = 0; k < 200; k++) assert.equal(calls.get(k), 1, `held file ${k}`);
    assert.equal(
      [...calls.values()].reduce((a, b) => a + b, 0),
      200 + 300,
    );
  });

  it('keeps the held share exact and estimates only the others', () => {
    // Held files have nothing resident, the others everything: a held file drawn into the sample would show.
    const estimate = estimateResidency({
      files: 1000,
      datasetBytes,
      held,
      sampleFiles: 400,
      sizeOf: (k) => sizes[k],
      residentOf: (k) => (k < 200 ? 0 : sizes[k]),
      random: mulberry32(4),
    });
    const others = total((k) => (k < 200 ? 0 : sizes[k]));
    assert.ok(Math.abs(estimate.residentBytes - others) / others < 0.02, `${estimate.residentBytes} against ${others}`);
  });
});
