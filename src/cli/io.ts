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
  /** Registers a handler for SIGINT, SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2; returns a function that removes it. */
  onSignal: (handler: (signal: NodeJS.Signals) => void) => () => void;
}

export function processIo(): Io {
  // A reader that stops early (`whatif --json | head`) closes the pipe: the rest of the output is dropped, as other
  // tools do, never a stack trace.
  let stdoutOpen = true;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    stdoutOpen = false;
    if (error.code !== 'EPIPE')
      process.stderr.write(`ds-analyzer: cannot write to standard output: ${error.message}\n`);
  });
  return {
    stdout: (text) => {
      if (stdoutOpen) process.stdout.write(text);
    },
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    cwd: process.cwd(),
    isTTY: Boolean(process.stderr.isTTY),
    onSignal: (handler) => {
      // SIGUSR1/2 are the job's (Slurm's warning before its time limit): the profiler passes them on.
      const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGUSR1', 'SIGUSR2'];
      for (const signal of signals) process.on(signal, handler);
      return () => {
        for (const signal of signals) process.off(signal, handler);
      };
    },
  };
}
