/** Everything a command may touch of the outside process: tests pass a fake. */
export interface Io {
  /** Writes to standard output. */
  stdout: (text: string) => void;
  /** Writes to standard error. */
  stderr: (text: string) => void;
  /** Environment variables. */
  env: NodeJS.ProcessEnv;
  /** Working directory. */
  cwd: string;
  /** Whether stderr is a terminal (progress lines, colour). */
  isTTY: boolean;
  /** Registers a handler for SIGINT/SIGTERM; returns a function that removes it. */
  onSignal: (handler: (signal: NodeJS.Signals) => void) => () => void;
}

export function processIo(): Io {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    cwd: process.cwd(),
    isTTY: Boolean(process.stderr.isTTY),
    onSignal: (handler) => {
      const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
      for (const signal of signals) process.on(signal, handler);
      return () => {
        for (const signal of signals) process.off(signal, handler);
      };
    },
  };
}
