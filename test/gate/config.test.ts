import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ExitCode, UserError } from '../../src/errors.js';
import { resolveBudgets } from '../../src/gate/config.js';
import { parseGateConfig } from '../../src/gate/config-file.js';

function expectConfigError(json: unknown, pattern: RegExp) {
  assert.throws(
    () => parseGateConfig(json, 'gate.json'),
    (error: unknown) => {
      assert.ok(error instanceof UserError);
      assert.equal(error.exitCode, ExitCode.BadValue);
      assert.match(error.message, pattern);
      assert.doesNotMatch(error.message, /\n/);
      return true;
    },
  );
}

test('a valid config: percentages and fractions, levels default to error', () => {
  const config = parseGateConfig(
    { budgets: { fetchStall: { max: '20%' }, prepStall: { level: 'warn', max: 0.3 }, throughput: { min: 100 } } },
    'gate.json',
  );
  assert.deepEqual(config.budgets.fetchStall, { level: 'error', max: 0.2 });
  assert.deepEqual(config.budgets.prepStall, { level: 'warn', max: 0.3 });
  assert.deepEqual(config.budgets.throughput, { level: 'error', min: 100 });
});

test('unknown keys are errors that name the key and the allowed ones', () => {
  expectConfigError(
    { budgets: { fetchStal: { max: 0.2 } } },
    /unknown key 'fetchStal' at budgets; allowed: fetchStall, prepStall, totalStall, checkpointStall, timeToFirstBatch, throughput, regression/,
  );
  expectConfigError({ budgets: {}, extra: 1 }, /unknown key 'extra' at \(top level\)/);
  expectConfigError(
    { budgets: { fetchStall: { max: 0.2, maximum: 3 } } },
    /unknown key 'maximum' at budgets\.fetchStall/,
  );
});

test('bad levels and values are errors naming the key', () => {
  expectConfigError(
    { budgets: { fetchStall: { level: 'fatal', max: 0.2 } } },
    /budgets\.fetchStall\.level must be one of error, warn, off/,
  );
  expectConfigError({ budgets: { fetchStall: { max: '20 percent' } } }, /budgets\.fetchStall\.max/);
  expectConfigError({ budgets: { fetchStall: { max: 1.5 } } }, /at most 100%/);
  expectConfigError({ budgets: { throughput: { min: -3 } } }, /budgets\.throughput\.min/);
  expectConfigError({}, /budgets/);
});

test('flags override the file; off drops a rule; the baseline resolves relative to the config file', () => {
  const config = parseGateConfig(
    {
      baseline: 'base.json',
      budgets: {
        fetchStall: { level: 'warn', max: 0.5 },
        prepStall: { level: 'off', max: 0.1 },
        regression: { max: '3%' },
      },
    },
    '/ci/gate.json',
  );
  const { budgets, baselinePath } = resolveBudgets(config, '/ci/gate.json', { maxFetchStall: 0.2 }, null, '/work');
  assert.deepEqual(budgets.fetchStall, { level: 'error', limit: 0.2, source: '--max-fetch-stall' });
  assert.equal(budgets.prepStall, undefined);
  assert.equal(budgets.regression?.limit, 0.03);
  assert.equal(baselinePath, '/ci/base.json');
});

test('a regression budget without a baseline is a usage error; --baseline alone implies 5%', () => {
  assert.throws(
    () => resolveBudgets(null, null, { maxRegression: 0.05 }, null, '/w'),
    (e: unknown) => e instanceof UserError && e.exitCode === ExitCode.Usage && /needs a baseline/.test(e.message),
  );
  const { budgets } = resolveBudgets(null, null, {}, 'b.json', '/w');
  assert.equal(budgets.regression?.limit, 0.05);
});
