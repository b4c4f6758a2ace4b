import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ExitCode } from '../../src/errors.js';
import type { ValidationPoint } from '../../src/validate/point-kinds.js';
import type { ValidationReport, ValidationResult } from '../../src/validate/results.js';
import {
  modelVerdict,
  recommendationVerdict,
  TARGET_MEDIAN_ERROR,
  validationFailure,
} from '../../src/validate/verdict.js';
import { NEGLIGIBLE_FETCH_STALL } from '../../src/whatif/model.js';

const MiB = 2 ** 20;
const recommended: ValidationPoint = { kind: 'cache', cacheBytes: 200 * MiB, recommended: true };

/** A measured point: `rate` samples/s ± `halfWidth`, predicted at `predicted`. */
function point(p: ValidationPoint, rate: number | null, halfWidth = 0, predicted = 100): ValidationResult {
  return {
    point: p,
    status: rate === null ? 'failed' : 'measured',
    residency: null,
    affinity: null,
    predictedSamplesPerSec: predicted,
    residentBytes: null,
    predictedHitRatio: p.kind === 'cache' ? 0.9 : null,
    measuredHitRatio: p.kind === 'cache' ? 0.5 : null,
    atMeasuredHitSamplesPerSec: null,
    measuredSamplesPerSec: rate,
    measuredHalfWidth: rate === null ? null : halfWidth,
    relativeError: rate === null ? null : (predicted - rate) / rate,
    anchoredSamplesPerSec: null,
    anchoredError: null,
    note: '',
    failureTail: null,
  };
}

function report(results: ValidationResult[], fields: Partial<ValidationReport> = {}): ValidationReport {
  return {
    results,
    interrupted: false,
    medianAbsError: null,
    notHeld: 0,
    controlAbsError: null,
    anchoredMedianAbsError: null,
    modelCaveats: [],
    overlapMeasured: false,
    notRun: [],
    ...fields,
  };
}

test('the model meets its target when the median absolute error is at most 10%, the target itself included', () => {
  assert.equal(TARGET_MEDIAN_ERROR, 0.1);
  assert.deepEqual(modelVerdict(report([], { medianAbsError: 0.1 })), {
    kind: 'within-target',
    medianAbsError: 0.1,
    targetAbsError: 0.1,
  });
  assert.equal(modelVerdict(report([], { medianAbsError: 0.1001 })).kind, 'beyond-target');
  assert.equal(modelVerdict(report([], { medianAbsError: 0 })).kind, 'within-target');
});

test('with no error to judge, the verdict says whether points ran but did not hold, or nothing was measured', () => {
  const notHeld = { ...point({ kind: 'cpus', cpus: 1 }, 90), status: 'not-held' as const };
  assert.equal(modelVerdict(report([point({ kind: 'control' }, 95), notHeld])).kind, 'untested');
  assert.equal(modelVerdict(report([point({ kind: 'cpus', cpus: 1 }, null)])).kind, 'unmeasured');
  // A control that did not hold is not a point of the model: nothing was tested, nothing held or not.
  assert.equal(modelVerdict(report([{ ...point({ kind: 'control' }, 95), status: 'not-held' }])).kind, 'unmeasured');
});

test('the recommended cache is judged only when it was measured, and only against a measured control', () => {
  assert.equal(
    recommendationVerdict(report([point({ kind: 'control' }, 100), point({ kind: 'cache', cacheBytes: MiB }, 60)])),
    null,
    'no recommended point',
  );
  assert.equal(
    recommendationVerdict(report([point({ kind: 'control' }, 100), point(recommended, null)])),
    null,
    'the recommended point failed',
  );
  assert.deepEqual(recommendationVerdict(report([point(recommended, 90)])), { kind: 'no-control' });
  assert.deepEqual(recommendationVerdict(report([point({ kind: 'control' }, null), point(recommended, 90)])), {
    kind: 'no-control',
  });
});

test('slower than the control by less than the combined noise: the fetch stall is gone within noise', () => {
  // Half-widths 6 and 5, run-to-run 5% of 380 = 19: noise = sqrt(36 + 25 + 361) = 20.5; 10 samples/s apart.
  const verdict = recommendationVerdict(
    report([point({ kind: 'control' }, 380, 5), point(recommended, 370, 6)], { controlAbsError: 0.05 }),
  );
  assert.equal(verdict?.kind, 'gone-within-noise');
  if (verdict?.kind !== 'gone-within-noise') return;
  assert.ok(Math.abs(verdict.noiseSamplesPerSec - Math.sqrt(36 + 25 + 19 ** 2)) < 1e-9);
  assert.equal(verdict.runToRunShare, 0.05);
  assert.deepEqual([verdict.cacheBytes, verdict.samplesPerSec, verdict.controlSamplesPerSec], [200 * MiB, 370, 380]);
  // A control that landed exactly on the profile adds no run-to-run term, and the verdict names none.
  const exact = recommendationVerdict(
    report([point({ kind: 'control' }, 380, 5), point(recommended, 376, 6)], { controlAbsError: 0 }),
  );
  assert.equal(exact?.kind === 'gone-within-noise' && exact.runToRunShare, null);
});

test('slower beyond noise but under the negligible share: gone; beyond both: not gone', () => {
  // 1.6% slower, half-widths 3 and 1.8: beyond noise (6 > 3.5), under 2%.
  const residue = recommendationVerdict(
    report([point({ kind: 'control' }, 380, 1.8), point(recommended, 374, 3)], { controlAbsError: 0 }),
  );
  assert.equal(residue?.kind, 'gone-negligible');
  assert.ok(
    residue?.kind === 'gone-negligible' &&
      Math.abs(residue.slowerShare - 6 / 380) < 1e-12 &&
      residue.negligibleShare === NEGLIGIBLE_FETCH_STALL,
  );
  const slow = recommendationVerdict(
    report([point({ kind: 'control' }, 380, 5), point(recommended, 300, 6)], { controlAbsError: 0 }),
  );
  assert.equal(slow?.kind, 'not-gone');
  assert.ok(slow?.kind === 'not-gone' && Math.abs(slow.slowerShare - 80 / 380) < 1e-12);
  // The cache hit less than predicted (0.5 against 0.9): the hit ratio itself is off, so no hit ratios are named.
  assert.equal(slow?.kind === 'not-gone' && slow.heldHitRatios, null);
});

test('not gone although the cache hit as predicted (within 0.02): the hit ratios are named, and whether the overlap was measured', () => {
  const hits = { ...point(recommended, 300, 6), measuredHitRatio: 0.885, predictedHitRatio: 0.9 };
  const verdict = recommendationVerdict(
    report([point({ kind: 'control' }, 380, 5), hits], { controlAbsError: 0, overlapMeasured: true }),
  );
  assert.ok(verdict?.kind === 'not-gone');
  assert.deepEqual(verdict.heldHitRatios, { measured: 0.885, predicted: 0.9 });
  assert.equal(verdict.overlapMeasured, true);
  const below = { ...hits, measuredHitRatio: 0.87 };
  const missed = recommendationVerdict(report([point({ kind: 'control' }, 380, 5), below], { controlAbsError: 0 }));
  assert.equal(missed?.kind === 'not-gone' && missed.heldHitRatios, null);
});

test('a run fails when the job failed at every point, and is interrupted when Ctrl-C stopped it', () => {
  const failed = [point({ kind: 'control' }, null), point({ kind: 'cpus', cpus: 1 }, null)];
  assert.deepEqual(validationFailure(report(failed), 2), { kind: 'job-failed', exitCode: ExitCode.JobFailed });
  assert.equal(
    validationFailure(report([point({ kind: 'control' }, null), point({ kind: 'cpus', cpus: 1 }, 90)]), 2),
    null,
    'one point measured',
  );
  assert.equal(validationFailure(report([]), 0), null);
  // Interrupted: the points completed before it are reported, even if they failed.
  assert.deepEqual(validationFailure(report(failed.slice(0, 1), { interrupted: true }), 3), {
    kind: 'interrupted',
    exitCode: ExitCode.Interrupted,
    completed: 1,
    planned: 3,
  });
  assert.deepEqual(validationFailure(report([], { interrupted: true }), 3), {
    kind: 'interrupted',
    exitCode: ExitCode.Interrupted,
    completed: 0,
    planned: 3,
  });
});
