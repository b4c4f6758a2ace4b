import assert from 'node:assert/strict';
import type { Io } from '../../src/cli/io.js';

/** An Io that records output, for running commands in-process. */
export function fakeIo(cwd: string, env: NodeJS.ProcessEnv = process.env): Io & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    stdout: (text: string) => {
      io.out += text;
    },
    stderr: (text: string) => {
      io.err += text;
    },
    env,
    cwd,
    isTTY: false,
    onSignal: () => () => undefined,
  };
  return io;
}

/**
 * Runs the CLI in-process and checks that it failed with `code` and a single
 * line of error matching `pattern`, without a stack trace. Commander's
 * '(see ... --help)' hint does not count as a line.
 */
export async function expectOneLineError(cwd: string, args: string[], code: number, pattern: RegExp): Promise<void> {
  const { run } = await import('../../src/cli/main.js');
  const io = fakeIo(cwd);
  const exitCode = await run(args, io);
  assert.equal(exitCode, code, `exit code of ${args.join(' ')}; stderr: ${io.err}`);
  const lines = io.err
    .trimEnd()
    .split('\n')
    .filter((line) => !line.startsWith('('));
  assert.equal(lines.length, 1, `one line of error, got: ${io.err}`);
  assert.match(lines[0], pattern);
  assert.doesNotMatch(io.err, /\bat .+:\d+:\d+\)?$/m, 'no stack trace');
}
