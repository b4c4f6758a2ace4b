import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseDurationSec, parseFraction, parseRate, parseSize } from '../src/units.js';
import { ExitCode, UserError } from '../src/errors.js';

test('sizes in decimal and binary units', () => {
  assert.equal(parseSize('64G'), 64e9);
  assert.equal(parseSize('512MiB'), 512 * 2 ** 20);
  assert.equal(parseSize('1.5TB'), 1.5e12);
  assert.equal(parseSize('1000'), 1000);
  assert.equal(parseSize('4 kib'), 4096);
});

test('rates with and without /s', () => {
  assert.equal(parseRate('50MB/s'), 50e6);
  assert.equal(parseRate('1.5GiB/s'), Math.round(1.5 * 2 ** 30));
  assert.equal(parseRate('200M'), 200e6);
});

test('bad sizes are BadValue errors naming the flag', () => {
  for (const bad of ['64X', '', 'G', '-5G', '0', '1e3', 'NaN', '5 GB extra']) {
    assert.throws(
      () => parseSize(bad, '--cache'),
      (error: unknown) => error instanceof UserError && error.exitCode === ExitCode.BadValue && error.message.includes('--cache'),
      bad,
    );
  }
});

test('fractions, percentages and durations', () => {
  assert.equal(parseFraction('5%', '--precision'), 0.05);
  assert.equal(parseFraction('0.02', '--precision'), 0.02);
  assert.throws(() => parseFraction('150%', '--precision'), UserError);
  assert.equal(parseDurationSec('90', '--timeout'), 90);
  assert.equal(parseDurationSec('5m', '--timeout'), 300);
  assert.throws(() => parseDurationSec('soon', '--timeout'), UserError);
});

test('property: any positive size written with a unit parses back to value x multiplier', () => {
  const units: [string, number][] = [['', 1], ['K', 1e3], ['MB', 1e6], ['GiB', 2 ** 30], ['t', 1e12]];
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 1_000_000 }), fc.constantFrom(...units), (value, [unit, multiplier]) => {
      assert.equal(parseSize(`${value}${unit}`), Math.round(value * multiplier));
    }),
  );
});

test('property: arbitrary text either parses to a positive size or throws a UserError', () => {
  fc.assert(
    fc.property(fc.string(), (text) => {
      try {
        assert.ok(parseSize(text) > 0);
      } catch (error) {
        assert.ok(error instanceof UserError, String(error));
      }
    }),
  );
});
