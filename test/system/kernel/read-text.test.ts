import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseKernelNumber } from '../../../src/system/kernel/read-text.js';

test("a kernel file's number: one non-negative integer, whitespace around it allowed, anything else null", () => {
  assert.equal(parseKernelNumber('8192\n'), 8192);
  assert.equal(parseKernelNumber('  0 '), 0);
  for (const text of [null, '', 'max\n', '-1', '12 34', '1e3', '0x10']) assert.equal(parseKernelNumber(text), null, JSON.stringify(text));
});
