import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ExitCode } from '../../src/errors.js';
import type { Budgets } from '../../src/gate/config.js';
import type { RuleId } from '../../src/gate/rule-ids.js';
import { evaluateGate } from '../../src/gate/rules.js';
import { fixture } from './fixtures.js';

const err = (limit: number): Budgets[RuleId] => ({ level: 'error', limit, source: 'test' });
const warn = (limit: number): Budgets[RuleId] => ({ level: 'warn', limit, source: 'test' });

const ALL: Budgets = {
  fetchStall: err(0.2),
  prepStall: err(0.3),
  totalStall: err(0.4),
  throughput: err(300),
};

test('a compute-bound profile passes every budget', () => {
  const verdict = evaluateGate(fixture('pass'), ALL);
  assert.deepEqual(
    verdict.rules.map((r) => [r.id, r.result]),
    [
      ['fetchStall', 'pass'],
      ['prepStall', 'pass'],
      ['totalStall', 'pass'],
      ['throughput', 'pass'],
    ],
  );
  assert.equal(verdict.exitCode, ExitCode.Ok);
  assert.equal(verdict.failed, 0);
});

// Each rule must be able to fail, on a profile that breaks it, while the same budget passes on 'pass'.
const FAILING: [RuleId, string, number, RegExp][] = [
  ['fetchStall', 'fetch-bound', 0.2, /^80% ± /],
  ['prepStall', 'prep-bound', 0.3, /^59% ± /],
  ['totalStall', 'prep-bound', 0.4, /^61% ± /],
  ['throughput', 'fetch-bound', 300, /^69\.6 ± 0\.\d samples\/s$/],
];
for (const [rule, name, limit, actual] of FAILING) {
  test(`the ${rule} rule fails on ${name} and exits 1`, () => {
    const verdict = evaluateGate(fixture(name), { [rule]: err(limit) });
    assert.equal(verdict.rules.length, 1);
    assert.equal(verdict.rules[0].result, 'fail');
    assert.match(verdict.rules[0].actual, actual);
    assert.equal(verdict.exitCode, ExitCode.GateFailed);
    assert.equal(evaluateGate(fixture('pass'), { [rule]: err(limit) }).rules[0].result, 'pass');
  });
}

test('a prep-bound profile fails the prep budget but not the fetch budget', () => {
  const verdict = evaluateGate(fixture('prep-bound'), ALL);
  const result = Object.fromEntries(verdict.rules.map((r) => [r.id, r.result]));
  assert.deepEqual(result, { fetchStall: 'pass', prepStall: 'fail', totalStall: 'fail', throughput: 'fail' });
  assert.equal(verdict.failed, 3);
});

test('a budget at level warn reports but does not fail the gate', () => {
  const verdict = evaluateGate(fixture('fetch-bound'), { fetchStall: warn(0.2), prepStall: err(0.3) });
  assert.equal(verdict.rules[0].result, 'warn');
  assert.equal(verdict.rules[1].result, 'pass');
  assert.equal(verdict.warned, 1);
  assert.equal(verdict.exitCode, ExitCode.Ok);
});

test('a regression beyond the budget and the noise of both profiles fails', () => {
  const verdict = evaluateGate(fixture('regressed'), { regression: err(0.05) }, fixture('pass'));
  const rule = verdict.rules[0];
  assert.equal(rule.result, 'fail');
  assert.ok(rule.value! > 0.2, `regressed is ~25% slower, got ${rule.value}`);
  assert.match(rule.note!, /beyond the 5% budget even after the noise of both profiles/);
  assert.equal(verdict.exitCode, ExitCode.GateFailed);
});

test('a regression above the budget but within the noise passes, and says so', () => {
  const verdict = evaluateGate(fixture('regressed-noisy'), { regression: err(0.05) }, fixture('pass'));
  const rule = verdict.rules[0];
  // The mean alone exceeds the budget: only the noise keeps this from failing.
  assert.ok(rule.value! > 0.05, `mean change ${rule.value}`);
  assert.equal(rule.result, 'pass');
  assert.match(
    rule.note!,
    /above the 5% budget but within the noise of both profiles \(± \d+(\.\d)?%\), not a proven regression/,
  );
  assert.equal(verdict.exitCode, ExitCode.Ok);
});

test('a small change inside the budget passes without a noise note', () => {
  const verdict = evaluateGate(fixture('pass-rerun'), { regression: err(0.05) }, fixture('pass'));
  assert.equal(verdict.rules[0].result, 'pass');
  assert.doesNotMatch(verdict.rules[0].note ?? '', /noise/);
});

test('the noise of the baseline counts too: a noisy baseline hides the same change', () => {
  const tight = evaluateGate(fixture('regressed-noisy'), { regression: err(0.05) }, fixture('pass'));
  const reversed = evaluateGate(fixture('pass'), { regression: err(0.05) }, fixture('regressed-noisy'));
  assert.equal(tight.rules[0].result, 'pass');
  // pass is faster than regressed-noisy: an improvement never fails.
  assert.equal(reversed.rules[0].result, 'pass');
  assert.ok(reversed.rules[0].value! < 0);
});

test('an unproven cold mode fails the rules that rest on it, with the reason, and not the others', () => {
  const profile = fixture('unproven-cold');
  // The numbers alone would pass: the same series as 'pass'.
  const verdict = evaluateGate(profile, { ...ALL, regression: err(0.05) }, fixture('pass'));
  const byId = Object.fromEntries(verdict.rules.map((r) => [r.id, r]));
  for (const id of ['fetchStall', 'totalStall', 'throughput', 'regression']) {
    assert.equal(byId[id].result, 'fail', id);
    assert.match(byId[id].note!, /the cold mode is unproven: only 40\.0% of consumed bytes read from storage/, id);
    assert.equal(byId[id].actual, '—');
  }
  assert.equal(byId.prepStall.result, 'pass', 'prep stall rests on synthetic and cached only');
  assert.equal(verdict.exitCode, ExitCode.GateFailed);
});

test('an unproven baseline fails the regression rule with the baseline named', () => {
  const verdict = evaluateGate(fixture('pass'), { regression: err(0.05) }, fixture('unproven-cold'));
  assert.equal(verdict.rules[0].result, 'fail');
  assert.match(verdict.rules[0].note!, /^baseline: the cold mode is unproven/);
});

test('a profile whose job failed exits with the job-failed code', () => {
  const verdict = evaluateGate(fixture('job-failed'), { prepStall: err(0.3), fetchStall: err(0.2) });
  assert.equal(verdict.exitCode, ExitCode.JobFailed);
  assert.match(verdict.jobFailure!, /the job failed in cold mode \(job-failed, exit code 1\)/);
  assert.equal(verdict.rules.find((r) => r.id === 'fetchStall')!.result, 'fail');
  assert.match(verdict.rules.find((r) => r.id === 'fetchStall')!.note!, /cold mode has too few measured iterations/);
});

test('a limit inside the 95% interval is flagged as marginal', () => {
  const profile = fixture('fetch-bound');
  const share = evaluateGate(profile, { fetchStall: err(0.5) }).rules[0].value!;
  const verdict = evaluateGate(profile, { fetchStall: err(share + 0.001) });
  assert.equal(verdict.rules[0].result, 'pass');
  assert.match(verdict.rules[0].note!, /limit lies inside the 95% interval/);
});

test('the checkpoint-stall rule fails on saves over budget, passes (saying so) when no save was seen', () => {
  const profile = fixture('pass');
  const iterMs = profile.analysis!.iterMs!.mean;
  const none = evaluateGate(profile, { checkpointStall: err(0.035) });
  assert.equal(none.rules[0].result, 'pass');
  assert.match(none.rules[0].note!, /no checkpoint save seen in the cold mode's \d+ iterations/);
  profile.analysis!.checkpointStall = {
    ms: { mean: 0.2 * iterMs, halfWidth: 0.01 * iterMs, proven: true },
    fraction: 0.2,
    call: 'stall',
    mode: 'cold',
    modes: ['cold'],
    saves: 12,
    inStepSaves: 12,
    perSaveMs: { mean: iterMs, halfWidth: 0.05 * iterMs, proven: true },
    syncMsPerSave: 0,
    asyncWriteMs: null,
    bytesPerSave: 128e6,
    intervalIterations: 5,
    intervalSource: 'saves',
    writeBytesPerSec: null,
    syncedBytesPerSec: null,
    apis: ['torch.save'],
    syntheticSaves: null,
    unseenWriteBytesPerIter: null,
    text: 'test',
  };
  const over = evaluateGate(profile, { checkpointStall: err(0.035) });
  assert.equal(over.rules[0].result, 'fail');
  assert.equal(over.rules[0].actual, '20% ± 1%');
  assert.equal(over.exitCode, ExitCode.GateFailed);
  assert.equal(evaluateGate(profile, { checkpointStall: err(0.25) }).rules[0].result, 'pass');
});

test("the time-to-first-batch rule reads the epoch start, or the loader's first wait as a lower bound", () => {
  const profile = fixture('pass');
  profile.modes.cold!.firstBatch = { sec: 9, startupSec: 7, firstWaitSec: 2 };
  const fallback = evaluateGate(profile, { timeToFirstBatch: err(1) });
  assert.equal(fallback.rules[0].result, 'fail');
  assert.equal(fallback.rules[0].actual, '2.00 s');
  assert.match(fallback.rules[0].note!, /lower bound/);
  profile.analysis!.boundaryStall = {
    ms: { mean: 1, halfWidth: null, proven: true },
    fraction: 0.01,
    call: 'within-noise',
    mode: 'cold',
    perEpochMs: { mean: 500, halfWidth: null, proven: true },
    createMs: 300,
    firstWaitExcessMs: 200,
    steadyWaitMs: 0,
    basis: 'later-epochs',
    epochs: 1,
    epochIterations: 500,
    workers: 2,
    persistentWorkers: false,
    repeats: null,
    firstBatchMs: 2500,
    text: 'test',
  };
  const measured = evaluateGate(profile, { timeToFirstBatch: err(3) });
  assert.equal(measured.rules[0].result, 'pass');
  assert.equal(measured.rules[0].actual, '2.50 s');
  assert.equal(measured.rules[0].note, null);
  assert.equal(evaluateGate(profile, { timeToFirstBatch: err(2) }).rules[0].result, 'fail');
});

test('a profile with a stalled mode exits with the job-failed code and names the stall', () => {
  const profile = fixture('pass');
  profile.modes.cold!.stalled = { cause: 'hung', atSec: 12, text: 'no iteration for 74 s: the job looks hung' };
  const verdict = evaluateGate(profile, { prepStall: err(0.3), fetchStall: err(0.2) });
  assert.equal(verdict.exitCode, ExitCode.JobFailed);
  assert.equal(verdict.jobFailure, 'the cold mode stalled: no iteration for 74 s: the job looks hung');
});
