import { test } from 'node:test';
import assert from 'node:assert/strict';
import { duetCpus, overlapPaces, type TimedIteration } from '../../src/gate/duet.js';

/** `n` iterations of `samples` each, one every `everyMs` from `fromMs`. */
function iterations(fromMs: number, everyMs: number, n: number, samples = 4): TimedIteration[] {
  return Array.from({ length: n }, (_, k) => ({ t: fromMs + k * everyMs, samples }));
}

test('the CPUs are halved, and the halves swap on alternate pairs; one CPU cannot hold a duet', () => {
  assert.deepEqual(duetCpus([0, 1], 0), { reference: [0], candidate: [1] });
  assert.deepEqual(duetCpus([0, 1], 1), { reference: [1], candidate: [0] });
  assert.deepEqual(duetCpus([2, 3, 4, 5, 6], 0), { reference: [2, 3], candidate: [4, 5] });
  assert.equal(duetCpus([0], 0), null);
});

test("each version's pace is taken over the window both measured, not over its own start or lone end", () => {
  // The reference starts 1 s before the candidate and ends 1 s before it. Within the shared window both ran at 10 ms
  // an iteration (2.5 ms a sample); outside it each ran alone at 5 ms, which the whole-run paces would count.
  const reference = [...iterations(0, 5, 200), ...iterations(1000, 10, 401)];
  const candidate = [...iterations(1000, 10, 401), ...iterations(5005, 5, 200)];
  const paces = overlapPaces(reference, candidate)!;
  assert.equal(paces.windowMs, 4000);
  assert.equal(paces.reference, 2.5);
  assert.equal(paces.candidate, 2.5);
});

test('without a shared window of two iterations each there is no duet pace', () => {
  assert.equal(overlapPaces(iterations(0, 10, 10), iterations(5000, 10, 10)), null);
  assert.equal(overlapPaces([], iterations(0, 10, 10)), null);
});
