import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../src/cli/main.js';
import { ExitCode } from '../../src/errors.js';
import { expectOneLineError, fakeIo } from './fake-io.js';

const dir = mkdtempSync(join(tmpdir(), 'dsa-cli-'));
writeFileSync(join(dir, 'a.bin'), 'x'.repeat(4096));

function expectError(args: string[], code: ExitCode, pattern: RegExp) {
  return expectOneLineError(dir, args, code, pattern);
}

test('no subcommand prints help and exits with the usage code', async () => {
  const io = fakeIo(dir);
  assert.equal(await run([], io), ExitCode.Usage);
  assert.match(io.err, /Usage: ds-analyzer/);
});

test('profile without a training command', () =>
  expectError(['profile', '--data', dir], ExitCode.Usage, /no training command: put it after '--'/));

test('profile without --data', () => expectError(['profile', '--', 'true'], ExitCode.Usage, /--data is required/));

test('a missing --data path', () =>
  expectError(['profile', '--data', join(dir, 'nope'), '--', 'true'], ExitCode.MissingInput, /nope/));

test('an unparseable size', () =>
  expectError(
    ['profile', '--data', dir, '--storage-bw', '50XB/s', '--', 'true'],
    ExitCode.BadValue,
    /--storage-bw '50XB\/s'/,
  ));

test('an unparseable precision', () =>
  expectError(['profile', '--data', dir, '--precision', 'tight', '--', 'true'], ExitCode.BadValue, /--precision/));

test('an unknown mode', () =>
  expectError(['profile', '--data', dir, '--modes', 'warm', '--', 'true'], ExitCode.BadValue, /unknown mode 'warm'/));

test('--continue beside a flag that needs launches of its own, or would stay in the run', async () => {
  for (const extra of [['--separate-launches'], ['--cpus', '1'], ['--overlap'], ['--storage-bw', '50MB/s']])
    await expectError(
      ['profile', '--continue', ...extra, '--data', dir, '--', 'true'],
      ExitCode.Usage,
      new RegExp(`--continue rides the real run, where ${extra[0]} has no place`),
    );
});

test('an unknown flag', () => expectError(['doctor', '--frobnicate'], ExitCode.Usage, /unknown option '--frobnicate'/));

test('--version prints the package version', async () => {
  const io = fakeIo(dir);
  assert.equal(await run(['--version'], io), ExitCode.Ok);
  assert.match(io.out, /^\d+\.\d+\.\d+\n$/);
});

test('every command has --help with examples and exit codes', async () => {
  for (const command of ['profile', 'demo', 'doctor']) {
    const io = fakeIo(dir);
    assert.equal(await run([command, '--help'], io), ExitCode.Ok);
    assert.match(io.out, /Examples:/, command);
    assert.match(io.out, /Exit codes:/, command);
  }
});

test('a folder given as a profile is a missing input, one line, for every command that reads one', async () => {
  for (const args of [
    ['whatif', dir],
    ['gate', dir, '--max-fetch-stall', '20%'],
    ['compare', dir, dir],
    ['report', dir],
    ['export', dir, '--format', 'csv'],
  ]) {
    await expectError(args, ExitCode.MissingInput, /is a folder, not a profile file/);
  }
});

test('a profile this user cannot read is a missing input, one line', {
  skip: process.getuid?.() === 0 && 'root reads any file',
}, async () => {
  const locked = join(dir, 'locked.json');
  writeFileSync(locked, '{}', { mode: 0o000 });
  await expectError(['whatif', locked], ExitCode.MissingInput, /cannot be read by this user/);
});
