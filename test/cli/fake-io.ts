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
