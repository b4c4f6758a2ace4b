import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pairedChange, type Arm } from '../../src/gate/paired.js';
import {
  launchOrder,
  launchPaces,
  MAX_SLICE_MS,
  MIN_SLICE_MS,
  slicePace,
  sliceMs,
  type Slice,
  type TimedIteration,
} from '../../src/gate/slices.js';

/** Iterations back to back from `fromMs` to `toMs`, each `ms` long with 4 samples (a stopped stretch runs none). */
function iterations(fromMs: number, toMs: number, ms: number): TimedIteration[] {
  const out: TimedIteration[] = [];
  for (let t = fromMs; t + ms <= toMs; t += ms) out.push({ fromMs: t, toMs: t + ms, samples: 4 });
  return out;
}

/**
 * Slices of 1 s in A B B A order on a machine whose pace drifts by `drift` a slice: the reference's iterations take
 * 10 ms, the candidate's 10 x (1 + effect), both times (1 + drift)^k in slice k; the first after each resume `firstMs`.
 */
function slicedRun(pairs: number, effect: number, drift: number, firstMs = 10) {
  const slices: Slice[] = [];
  const runs: Record<Arm, TimedIteration[]> = { reference: [], candidate: [] };
  for (let k = 0; k < 2 * pairs; k++) {
    const arm: Arm = k % 4 === 0 || k % 4 === 3 ? 'reference' : 'candidate';
    const fromMs = 1000 * k;
    const ms = 10 * (arm === 'candidate' ? 1 + effect : 1) * (1 + drift) ** k;
    runs[arm].push({ fromMs, toMs: fromMs + firstMs, samples: 4 }, ...iterations(fromMs + firstMs, fromMs + 1000, ms));
    slices.push({ arm, fromMs, toMs: fromMs + 1000 });
  }
  return { slices, runs };
}

test("a slice's pace: the iterations inside it, the first after the resume and any that straddle its ends left out", () => {
  const slice: Slice = { arm: 'reference', fromMs: 1000, toMs: 2000 };
  const run = [
    { fromMs: 990, toMs: 1030, samples: 4 }, // began before the resume
    { fromMs: 1030, toMs: 1500, samples: 4 }, // the first after it: its batches were ready
    ...iterations(1500, 1900, 20),
    { fromMs: 1990, toMs: 2600, samples: 4 }, // stopped in its middle
  ];
  assert.equal(slicePace(slice, run), 5);
  assert.equal(slicePace(slice, run.slice(0, 3)), null, 'one iteration left: no pace');
});

test('a slice lasts 30 of the slower median iterations, within its bounds', () => {
  assert.equal(sliceMs(null), MIN_SLICE_MS);
  assert.equal(sliceMs(20), MIN_SLICE_MS);
  assert.equal(sliceMs(65), 1950);
  assert.equal(sliceMs(1000), MAX_SLICE_MS);
});

test("a launch's slices: a 10% slower candidate reads 10% under a drift of 2% a slice, the reference's own pace kept", () => {
  const { slices, runs } = slicedRun(8, 0.1, 0.02);
  const launch = launchPaces(slices, runs);
  assert.ok(launch);
  assert.ok(Math.abs(launch.change.relative - 0.1) < 1e-3, `relative ${launch.change.relative}`);
  assert.equal(launch.change.pairs, 8);
  assert.deepEqual(
    launch.paces.map((p) => p.arm),
    ['reference', 'candidate'],
  );
  // Its pace is ms a sample: 10 ms over 4 samples, times the drift's geometric mean.
  assert.ok(launch.paces[0].msPerSample > 2.5 && launch.paces[0].msPerSample < 3.1, `${launch.paces[0].msPerSample}`);
  // Over launches the two paces give the launch's own change back.
  const over = pairedChange([...launch.paces, ...launch.paces]);
  assert.ok(Math.abs(over.relative - launch.change.relative) < 1e-9);
});

test('the first iteration after a resume does not move the pace: a slow first (batches cold) is left out', () => {
  const launch = (firstMs: number) => {
    const { slices, runs } = slicedRun(4, 0, 0, firstMs);
    return launchPaces(slices, runs);
  };
  const [quick, slow] = [launch(10), launch(400)];
  assert.ok(quick && slow);
  assert.ok(Math.abs(slow.paces[0].msPerSample - quick.paces[0].msPerSample) < 1e-9);
});

test('a pair with a slice of too few iterations is dropped; none left: no pace', () => {
  const { slices, runs } = slicedRun(4, 0.1, 0);
  // The candidate's second slice (k = 2) held no iteration: its pair (slices 2 and 3) goes.
  const gap = {
    reference: runs.reference,
    candidate: runs.candidate.filter((it) => it.fromMs < 2000 || it.fromMs >= 3000),
  };
  const launch = launchPaces(slices, gap);
  assert.ok(launch);
  assert.equal(launch.change.pairs, 3);
  assert.equal(launchPaces(slices, { reference: [], candidate: runs.candidate }), null);
});

test("rounds launched in mirrored order: the first launch's advantage falls out of the change and its spread", () => {
  // A/A, 10 rounds: the version launched first runs 3% faster, each round +-0.5% of its own.
  const rounds = Array.from({ length: 10 }, (_, k) => {
    const [first, second] = launchOrder(k + 1);
    const noise = k % 3 === 0 ? 1.005 : 0.995;
    return [
      { arm: first, msPerSample: 10 },
      { arm: second, msPerSample: 10 * 1.03 * noise },
    ];
  }).flat();
  assert.deepEqual(launchOrder(1), ['reference', 'candidate']);
  assert.deepEqual(launchOrder(2), ['candidate', 'reference']);
  const change = pairedChange(rounds);
  assert.ok(Math.abs(change.relative) < 0.005, `A/A read ${change.relative}`);
  assert.ok(
    change.low! < 0 && change.high! > 0 && change.high! - change.low! < 0.02,
    `${change.low} to ${change.high}`,
  );
  // One order only, the advantage is a change of its own: what a gate with the reference always first read.
  const oneOrder = rounds.map((r, k) => ({ ...r, arm: (k % 2 === 0 ? 'reference' : 'candidate') as Arm }));
  assert.ok(pairedChange(oneOrder).low! > 0.02);
});
