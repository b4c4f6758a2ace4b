import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MIN_STOP_BLOCKS, stoppingDecision } from '../../src/analysis/stopping.js';
import { series } from './series.js';

const base = { precision: 0.02, minIterations: 50, maxIterations: 5000, workers: 2 };

test('stops on precision once the interval is tight enough', () => {
  const its = series({ n: 300, seed: 1, computeMs: 100, cv: 0.05 });
  const d = stoppingDecision(its, base);
  assert.equal(d.stop, true);
  assert.equal(d.reason, 'precision');
  assert.ok(d.summary!.relativePrecision! <= 0.02);
});

test('first precision stop comes at a sensible point, and its CI holds the truth', () => {
  for (const cv of [0.05, 0.2, 0.5]) {
    const its = series({ n: 5000, seed: 42, computeMs: 100, cv });
    let stopAt = -1;
    for (let n = 20; n <= its.length; n += 20) {
      const d = stoppingDecision(its.slice(0, n), base);
      if (d.stop) {
        assert.equal(d.reason, 'precision');
        const s = d.summary!;
        assert.ok(Math.abs(s.iterMs.mean - 100) <= 2 * s.iterMs.halfWidth!, `cv ${cv}: ${s.iterMs.mean}`);
        stopAt = n;
        break;
      }
    }
    // Per-iteration sd = 100 cv, so n ~ (1.96 cv / 0.02)^2 iterations are needed.
    const expected = Math.max(base.minIterations, ((1.96 * cv) / 0.02) ** 2);
    assert.ok(stopAt > 0 && stopAt < 3 * expected + 40, `cv ${cv}: stopped at ${stopAt}, expected ~${expected}`);
    assert.ok(stopAt > 0.4 * expected, `cv ${cv}: stopped too early at ${stopAt}, expected ~${expected}`);
  }
});

test('a noisy series does not stop on precision, then stops on the budget', () => {
  const its = series({ n: 400, seed: 3, computeMs: 100, cv: 0.8 });
  const opts = { ...base, precision: 0.001, maxIterations: 400 };
  assert.deepEqual(
    { stop: stoppingDecision(its.slice(0, 399), opts).stop, reason: stoppingDecision(its.slice(0, 399), opts).reason },
    { stop: false, reason: null },
  );
  const d = stoppingDecision(its, opts);
  assert.equal(d.stop, true);
  assert.equal(d.reason, 'budget');
  assert.notEqual(d.summary, null);
});

test('needs minIterations measured after warm-up', () => {
  const its = series({ n: 200, seed: 4, computeMs: 100, cv: 0.001 });
  assert.equal(stoppingDecision(its, { ...base, minIterations: 1000 }).stop, false);
  assert.equal(stoppingDecision(its, { ...base, minIterations: 150 }).stop, true);
});

test(`needs at least ${MIN_STOP_BLOCKS} blocks even when precise`, () => {
  // Workers 2 -> blocks of 6; 1 warm-up + 9 blocks = 55 iterations.
  const nine = series({ n: 55, seed: 5, computeMs: 100, cv: 0.001 });
  const ten = series({ n: 61, seed: 5, computeMs: 100, cv: 0.001 });
  const opts = { ...base, minIterations: 1 };
  assert.equal(stoppingDecision(nine, opts).summary!.blocks, 9);
  assert.equal(stoppingDecision(nine, opts).stop, false);
  assert.equal(stoppingDecision(ten, opts).reason, 'precision');
});

test('no iterations: keep going, no summary', () => {
  assert.deepEqual(stoppingDecision([], base), { stop: false, reason: null, summary: null });
});

test('cheap enough to call every 250 ms on 10k iterations', () => {
  const its = series({ n: 10_000, seed: 6, computeMs: 100, cv: 0.3 });
  stoppingDecision(its, base);
  const start = performance.now();
  for (let k = 0; k < 20; k++) stoppingDecision(its, { ...base, precision: 0.0001 });
  const perCall = (performance.now() - start) / 20;
  assert.ok(perCall < 25, `${perCall.toFixed(1)} ms per call`);
});
