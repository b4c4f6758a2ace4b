import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { StoppingTracker, stoppingDecision, type StoppingOptions } from '../../src/analysis/stopping.js';
import type { Iteration } from '../../src/schema/profile.js';
import { series } from './series.js';

// The incremental rule must take the decisions of the plain one at every check
// of a growing series; numbers may differ in the last bits (prefix sums), so a
// relative precision within 1e-9 of the target is allowed to round either way.
function assertSameDecision(
  tracker: StoppingTracker,
  its: readonly Iteration[],
  opts: StoppingOptions,
  where: string,
): void {
  const plain = stoppingDecision(its, opts);
  const fast = tracker.decide(its, opts);
  const p = plain.summary;
  const f = fast.summary;
  assert.equal(f === null, p === null, `${where}: summary presence`);
  if (p && f) {
    assert.equal(f.warmupIterations, p.warmupIterations, `${where}: warm-up`);
    assert.equal(f.blocks, p.blocks, `${where}: blocks`);
    assert.equal(f.measuredIterations, p.measuredIterations, `${where}: measured`);
    const close = (a: number | null, b: number | null, what: string): void => {
      if (a === null || b === null) {
        assert.equal(a, b, `${where}: ${what}`);
        return;
      }
      assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)), `${where}: ${what} ${a} vs ${b}`);
    };
    close(f.iterMs.mean, p.iterMs.mean, 'mean');
    close(f.iterMs.halfWidth, p.iterMs.halfWidth, 'half-width');
    close(f.waitMs.mean, p.waitMs.mean, 'wait');
    close(f.computeMs.halfWidth, p.computeMs.halfWidth, 'compute half-width');
    close(f.samplesPerSec, p.samplesPerSec, 'samples/s');
    close(f.relativePrecision, p.relativePrecision, 'relative precision');
    if (p.relativePrecision !== null && Math.abs(p.relativePrecision - opts.precision) <= 1e-9 * opts.precision) return;
  }
  assert.equal(fast.stop, plain.stop, `${where}: stop`);
  assert.equal(fast.reason, plain.reason, `${where}: reason`);
}

test('the incremental rule decides as the plain one at every check of a growing series (property)', () => {
  fc.assert(
    fc.property(
      fc.record({
        n: fc.integer({ min: 0, max: 1500 }),
        seed: fc.integer({ min: 1, max: 1e6 }),
        cv: fc.constantFrom(0, 0.001, 0.05, 0.3, 1),
        workers: fc.constantFrom(null, 0, 1, 2, 3, 8),
        slowStart: fc.integer({ min: 0, max: 200 }),
        slowFactor: fc.constantFrom(1, 1.5, 4),
        step: fc.integer({ min: 1, max: 97 }),
        precision: fc.constantFrom(0.005, 0.02, 0.1),
        minIterations: fc.integer({ min: 1, max: 300 }),
        maxIterations: fc.integer({ min: 10, max: 2000 }),
        minBlocks: fc.constantFrom(undefined, 5, 10),
        wait: fc.boolean(),
      }),
      (spec) => {
        const its = series({
          n: spec.n,
          seed: spec.seed,
          computeMs: 50,
          cv: spec.cv,
          slowStart: spec.slowStart,
          slowFactor: spec.slowFactor,
          ...(spec.wait ? { waitMs: (i: number) => (i % 4 === 0 ? 120 : 0) } : {}),
        });
        const opts: StoppingOptions = {
          precision: spec.precision,
          minIterations: spec.minIterations,
          maxIterations: spec.maxIterations,
          workers: spec.workers,
          ...(spec.minBlocks !== undefined ? { minBlocks: spec.minBlocks } : {}),
        };
        const tracker = new StoppingTracker(spec.workers);
        for (let n = 0; n <= its.length; n += spec.step) assertSameDecision(tracker, its.slice(0, n), opts, `n=${n}`);
        assertSameDecision(tracker, its, opts, 'all');
      },
    ),
    { numRuns: 150, seed: 10 },
  );
});

test('a series that arrives out of order, shrinks or changes workers is decided by the plain rule', () => {
  const its = series({ n: 400, seed: 7, computeMs: 100, cv: 0.2 });
  const opts: StoppingOptions = { precision: 0.01, minIterations: 50, maxIterations: 5000, workers: 2 };
  const tracker = new StoppingTracker(2);
  assertSameDecision(tracker, its.slice(0, 300), opts, 'first');
  const swapped = [...its];
  [swapped[310], swapped[320]] = [swapped[320], swapped[310]];
  assertSameDecision(tracker, swapped, opts, 'out of order');
  assertSameDecision(tracker, its.slice(0, 200), opts, 'shrunk');
  assertSameDecision(tracker, its, { ...opts, workers: 4 }, 'other workers');
  assertSameDecision(tracker, its, opts, 'back in order');
});

test('the median for progress is close to the exact one', () => {
  const its = series({ n: 5000, seed: 8, computeMs: 100, cv: 0.3 });
  const tracker = new StoppingTracker(2);
  const opts: StoppingOptions = { precision: 0.0001, minIterations: 50, maxIterations: 1e6, workers: 2 };
  const exact = stoppingDecision(its, opts).summary!.medianIterMs;
  const estimate = tracker.decide(its, opts).summary!.medianIterMs;
  assert.ok(Math.abs(estimate - exact) / exact < 0.03, `P2 ${estimate} vs exact ${exact}`);
});
