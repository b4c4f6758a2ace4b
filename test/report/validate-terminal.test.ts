import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ExitCode } from '../../src/errors.js';
import { validateProgressHooks } from '../../src/report/validate-progress.js';
import { renderValidation, renderValidationFailure } from '../../src/report/validate-terminal.js';
import type { PlannedPoint } from '../../src/validate/plan.js';
import type { ValidationPoint } from '../../src/validate/point-kinds.js';
import type { ValidationReport, ValidationResult } from '../../src/validate/results.js';

function row(
  point: ValidationPoint,
  predicted: number,
  measured: number,
  halfWidth: number,
  anchored: number | null = null,
): ValidationResult {
  return {
    point,
    status: 'measured',
    residency: null,
    affinity: null,
    predictedSamplesPerSec: predicted,
    residentBytes: point.kind === 'cache' ? point.cacheBytes : null,
    predictedHitRatio: point.kind === 'cache' ? 0.62 : null,
    measuredHitRatio: point.kind === 'cache' ? 0.55 : null,
    // At 0.55 hits instead of 0.62 the model predicts 5% slower than it did.
    atMeasuredHitSamplesPerSec: point.kind === 'cache' ? predicted * 0.95 : null,
    measuredSamplesPerSec: measured,
    measuredHalfWidth: halfWidth,
    relativeError: (predicted - measured) / measured,
    anchoredSamplesPerSec: anchored,
    anchoredError: anchored === null ? null : (anchored - measured) / measured,
    note: 'ok',
    failureTail: null,
  };
}

function report(results: ValidationResult[]): ValidationReport {
  return {
    results,
    interrupted: false,
    medianAbsError: 0.08,
    notHeld: 0,
    controlAbsError: Math.abs(results[0].relativeError!),
    anchoredMedianAbsError: 0.03,
    modelCaveats: [],
    overlapMeasured: false,
    notRun: [],
  };
}

test('the report shows the control, the anchored errors, and whether the recommended cache removed the fetch stall', () => {
  const control = row({ kind: 'control' }, 400, 380, 5);
  const gone = row({ kind: 'cache', cacheBytes: 200 * 2 ** 20, recommended: true }, 400, 370, 6, 380);
  const text = renderValidation(report([control, gone, row({ kind: 'cpus', cpus: 1 }, 210, 200, 4, 199.5)]), 'p.json');
  assert.match(text, /control \(as profiled\)\s+measured\s+400\.0\s+380\.0 ± 5\.0\s+5\.3%/);
  assert.match(
    text,
    /page cache 200\.0 MiB \(recommended\)\s+measured\s+400\.0\s+370\.0 ± 6\.0\s+8\.1%\s+2\.7%\s+0\.62\/0\.55/,
  );
  // The cache point's 8.1% split at the model's pace for the measured hit ratio (380 samples/s): 5.4% the policy's,
  // 2.7% the rest's.
  assert.match(
    text,
    /the cache points' error, by where it comes from:\n {2}page cache 200\.0 MiB \(recommended\): 8\.1% = \+5\.4% from the hit ratio \(0\.62 predicted, 0\.55 measured\) \+2\.7% from the rest of the model/,
  );
  assert.match(text, /median absolute error 8\.0%: within the 10% target/);
  assert.match(text, /control: the profiled settings re-run landed 5\.3% from the profile/);
  assert.match(text, /anchored to the control .*: median absolute error 3\.0%/);
  // 10 samples/s apart; noise: hypot(6, 5, 5.3% of 380 = 20) = 21.5.
  assert.match(
    text,
    /the fetch stall is gone within noise at the recommended cache 200\.0 MiB: 370\.0 vs 380\.0 samples\/s fully cached \(control\) \(noise ±21\.5 samples\/s, of which run-to-run variation 5\.3%\)/,
  );

  const notGone = row({ kind: 'cache', cacheBytes: 200 * 2 ** 20, recommended: true }, 400, 300, 6);
  const exact = row({ kind: 'control' }, 380, 380, 5);
  const text2 = renderValidation({ ...report([exact, notGone]), controlAbsError: 0 }, 'p.json');
  assert.doesNotMatch(text2, /failed; the end of its log/);
  const failed = {
    ...row({ kind: 'cpus', cpus: 1 }, 210, 1, 0),
    measuredSamplesPerSec: null,
    relativeError: null,
    failureTail: "Error: Cannot find module '/gone/job.js'",
  };
  assert.match(
    renderValidation(report([exact, failed]), 'p.json'),
    /1 CPU\(s\) failed; the end of its log:\n {2}\| Error: Cannot find module '\/gone\/job\.js'/,
  );
  assert.match(
    text2,
    /the fetch stall is NOT gone at the recommended cache 200\.0 MiB: 300\.0 vs 380\.0 samples\/s.*21\.1% slower beyond noise\n/,
  );
  // The cache hit as often as predicted: the overlap is what the model got wrong, and the report says so.
  const hits = { ...notGone, measuredHitRatio: 0.67, predictedHitRatio: 0.62 };
  const why = renderValidation({ ...report([exact, hits]), controlAbsError: 0 }, 'p.json');
  assert.match(
    why,
    /NOT gone .*; the cache hit as often as predicted \(0\.67 vs 0\.62\), so what is left is how the misses fall in time.*, and reads may run partly in series with pre-processing/,
  );
  // With the overlap measured (profile --overlap), only the timing of the misses is left to name.
  const measured = renderValidation({ ...report([exact, hits]), controlAbsError: 0, overlapMeasured: true }, 'p.json');
  assert.match(measured, /misses late\n/);
  assert.doesNotMatch(measured, /in series/);
  // 1.6% slower with half-widths of 3.0 and 1.8 (the emulated job here): beyond noise, under the model's 2%.
  const residue = row({ kind: 'cache', cacheBytes: 200 * 2 ** 20, recommended: true }, 380, 374, 3);
  const text3 = renderValidation(
    { ...report([{ ...exact, measuredHalfWidth: 1.8 }, residue]), controlAbsError: 0 },
    'p.json',
  );
  assert.match(
    text3,
    /the fetch stall is gone at the recommended cache 200\.0 MiB: 374\.0 vs 380\.0 samples\/s fully cached \(control\), 1\.6% slower, beyond noise but under the 2\.0% the model counts as no stall/,
  );
});

test('the progress hooks say which cache points were left out, the plan, and each point as it starts and ends', () => {
  let text = '';
  const hooks = validateProgressHooks((t) => (text += t), false, 4);
  hooks.onCachePointsSkipped!('no mincore here');
  const plan: PlannedPoint[] = [
    { point: { kind: 'control' }, iterations: 60, maxIterations: 100, estimatedSec: 3, maxSec: 5 },
    { point: { kind: 'cpus', cpus: 1 }, iterations: 60, maxIterations: 100, estimatedSec: 75, maxSec: 90 },
  ];
  hooks.onPlan!(plan);
  hooks.onPoint!({ kind: 'cpus', cpus: 1 }, 1);
  hooks.onPointDone!(
    {
      ...row({ kind: 'cpus', cpus: 1 }, 210, 200, 4),
      affinity: { cpus: [0], threads: 3, outside: 0, example: null, held: true },
    },
    1,
  );
  const lines = text.split('\n');
  assert.equal(lines[0], 'validate: cache points not run: no mincore here');
  assert.match(lines[1], /^validate plan \(estimated from the profile's rates; about 1m18s in all, at most 1m35s/);
  assert.match(lines[3], /^ {2}2\. 1 CPU\(s\) +~ +1m15s \(at most 1m30s\) {2}about 60 iterations/);
  assert.equal(lines[4], 'validate: point 2/2: 1 CPU(s) (~1m15s planned)');
  assert.equal(lines[5], 'validate: point 2/2: 1 CPU(s): done, affinity held');
});

test('a cache point that runs past its planned epochs says it goes on to its budget, not more iterations than planned with nothing left', () => {
  let text = '';
  const hooks = validateProgressHooks((t) => (text += t), true, 4);
  const cache = { kind: 'cache' as const, cacheBytes: 11 << 20 };
  hooks.onPlan!([{ point: cache, iterations: 64, maxIterations: 192, estimatedSec: 6, maxSec: 19 }]);
  const shown = (iterations: number, epoch: number, elapsedSec: number) => {
    text = '';
    hooks.onProgress!(0, { iterations, elapsedSec, epoch, epochs: 4, residentBytes: 12 << 20 });
    return text.replace('\r\x1b[K', '');
  };
  assert.equal(shown(30, 2, 3), 'point 1/1: epoch 2/4 iter 30/64, dataset cached 12.0 MiB, 3s, ~3s left');
  // Seen before: "epoch 4/4 iter 116/64, dataset cached 11.5 MiB, 11s, ~0s left", with 7 s still to run.
  assert.equal(
    shown(116, 8, 11),
    'point 1/1: epoch 8 (4 planned) iter 116 of at most 192 (past the planned 64: its 95% CI not yet tight), ' +
      'dataset cached 12.0 MiB, 11s, at most ~7s left',
  );
});

test('a run that did not end well is said in one line', () => {
  assert.equal(
    renderValidationFailure({ kind: 'job-failed', exitCode: ExitCode.JobFailed }),
    'no point was measured: the job failed at every point (the end of its log is in the report)',
  );
  assert.equal(
    renderValidationFailure({ kind: 'interrupted', exitCode: ExitCode.Interrupted, completed: 0, planned: 3 }),
    'interrupted before any point completed',
  );
  assert.equal(
    renderValidationFailure({ kind: 'interrupted', exitCode: ExitCode.Interrupted, completed: 2, planned: 3 }),
    'interrupted: 2 of 3 points completed; the report shows them',
  );
});

test('a write point shows its checkpoint stall and iteration, predicted and measured, the disks held, and what a v1 throttle cannot hold', () => {
  const check = {
    devices: ['vda (254:0)'],
    cgroup: 'v1' as const,
    synced: true,
    saves: 30,
    predictedPerSaveMs: 873,
    measuredPerSaveMs: 847,
    predictedStallMsPerIter: 174.7,
    measuredStallMsPerIter: 169.4,
    predictedIterMs: 227.7,
    measuredIterMs: 222.1,
    stallWithinTolerance: true,
    caveat: null,
  };
  const synced = { ...row({ kind: 'write', bytesPerSec: 40e6 }, 35.1, 36.0, 3), checkpoint: check };
  const buffered = {
    ...row({ kind: 'write', bytesPerSec: 20e6 }, 30, 31, 3),
    checkpoint: { ...check, synced: false, stallWithinTolerance: false, caveat: 'the throttle cannot hold it' },
  };
  const text = renderValidation(report([row({ kind: 'control' }, 120, 118, 2), synced, buffered]), 'p.json');
  assert.match(
    text,
    /writes held to 40\.0 MB\/s: checkpoint stall 169\.4 ms per iteration, predicted 174\.7 \(3\.1%\): within 15% \(or 3% of the iteration\); iteration 222\.1 ms, predicted 227\.7 \(2\.5%\); synced saves; disks held \(cgroup v1\): vda \(254:0\)\n/,
  );
  assert.match(
    text,
    /writes held to 20\.0 MB\/s: checkpoint stall .*: NOT within 15%.*buffered saves.*\n {2}note: the throttle cannot hold it\n/,
  );
});
