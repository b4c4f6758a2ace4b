import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allowedCpus, parseCpuList, withCpus } from '../../../src/system/cgroups/affinity.js';
import { ExitCode, UserError } from '../../../src/errors.js';

test('kernel CPU lists parse into CPU numbers', () => {
  assert.deepEqual(parseCpuList('0-3,8,10-11'), [0, 1, 2, 3, 8, 10, 11]);
  assert.deepEqual(parseCpuList('5'), [5]);
  assert.deepEqual(allowedCpus('Name:\tx\nCpus_allowed_list:\t2-3\n'), [2, 3]);
});

test('withCpus restricts the command to the first allowed CPUs with taskset', () => {
  const { argv, cpus } = withCpus(2, ['python', 'train.py'], process.env.PATH, [4, 5, 6]);
  assert.deepEqual(cpus, [4, 5]);
  assert.deepEqual(argv, ['taskset', '--cpu-list', '4,5', 'python', 'train.py']);
});

test('asking for more CPUs than allowed is a BadValue error naming the limit', () => {
  assert.throws(
    () => withCpus(3, ['true'], process.env.PATH, [0, 1]),
    (error: unknown) =>
      error instanceof UserError && error.exitCode === ExitCode.BadValue && /only 2 CPUs/.test(error.message),
  );
});
