import assert from 'node:assert/strict';
import { test } from 'node:test';
import { betweenRunSpread, widenedInterval } from '../../src/gate/between-runs.js';
import { evaluateGate } from '../../src/gate/rules.js';
import { commandWords } from '../../src/gate/command-words.js';
import { mulberry32 } from '../../src/random.js';
import { fixture } from './fixtures.js';

function normal(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/** A history of `n` runs at 10 ms/sample with lognormal run-to-run noise `sd`, a step of `step` from `at` on. */
function history(n: number, sd: number, seed: number, step = 0, at = n): number[] {
  const random = mulberry32(seed);
  return Array.from({ length: n }, (_, i) => 10 * (i >= at ? 1 + step : 1) * Math.exp(sd * normal(random)));
}

test('the spread between runs is that of a run-to-run change: sqrt(2) x the spread of one run', () => {
  const spread = betweenRunSpread(history(400, 0.03, 1), 'main/')!;
  assert.ok(Math.abs(spread.sdRelative - 0.03 * Math.SQRT2) < 0.005, `sd ${spread.sdRelative}`);
  assert.equal(spread.profiles, 400);
  assert.ok(spread.halfWidth > 1.9 * spread.sdRelative && spread.halfWidth < 2.1 * spread.sdRelative);
});

test('a step in the history is a change, not noise: the difference across it is left out', () => {
  const stepped = history(16, 0.01, 2, 0.3, 8);
  const spread = betweenRunSpread(stepped, 'main/')!;
  assert.ok(spread.differences < 15, `the step's difference is left out: ${spread.differences} of 15 kept`);
  assert.ok(spread.sdRelative < 0.03, `a 30% step left in would read about 7%: ${spread.sdRelative}`);
});

test('too short a history gives no spread', () => {
  assert.equal(betweenRunSpread([10, 10.1, 9.9], 'main/'), null);
});

test('the wider noise is judged: the history widens a tight interval and never narrows a wide one', () => {
  const spread = betweenRunSpread(history(40, 0.05, 3), 'main/')!;
  const widened = widenedInterval(0.02, spread);
  assert.equal(widened.used, 'between');
  assert.ok(widened.factor > 2, `factor ${widened.factor}`);
  assert.deepEqual(widenedInterval(1, spread), { halfWidth: 1, used: 'within', factor: 1 });
});

test('gate --baseline with the noise between runs: a change the profiles call beyond the noise passes, and says why', () => {
  const budgets = { regression: { level: 'error' as const, limit: 0.05, source: 'test' } };
  const within = evaluateGate(fixture('regressed'), budgets, fixture('pass'));
  assert.equal(within.rules[0].result, 'fail');
  // A history whose runs of unchanged code differ by about 20% from one to the next.
  const spread = betweenRunSpread(history(30, 0.15, 4), 'main-profiles/')!;
  const between = evaluateGate(fixture('regressed'), budgets, fixture('pass'), 'first', spread);
  const rule = between.rules[0];
  assert.equal(rule.result, 'pass', rule.note ?? '');
  assert.match(rule.note!, /within the noise between runs/);
  assert.match(
    rule.note!,
    /noise between runs counted: the spread of 30 stored profiles in main-profiles\/ .* widened the interval from ± [\d.]+% \(within the two profiles\) by [\d.]+x/,
  );
  // A quiet history keeps the profiles' own interval, and says so.
  const quiet = evaluateGate(
    fixture('regressed'),
    budgets,
    fixture('pass'),
    'first',
    betweenRunSpread(history(30, 0.001, 5), 'q/'),
  );
  assert.equal(quiet.rules[0].result, 'fail');
  assert.match(quiet.rules[0].note!, /is no wider than the two profiles' own/);
});

test('the reference command splits as a shell would, and shell syntax is refused', () => {
  assert.deepEqual(commandWords(`python train.py --name "a b" 'c d' e\\ f`), [
    'python',
    'train.py',
    '--name',
    'a b',
    'c d',
    'e f',
  ]);
  assert.deepEqual(commandWords(`sh -c 'make && ./run | tee log'`), ['sh', '-c', 'make && ./run | tee log']);
  assert.deepEqual(commandWords(`x ""`), ['x', '']);
  assert.throws(() => commandWords('python train.py | tee log'), /shell syntax '\|'/);
  assert.throws(() => commandWords('python "train.py'), /unclosed quote/);
  assert.throws(() => commandWords('   '), /names no command/);
});
