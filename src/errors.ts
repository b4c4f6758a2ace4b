/** Exit codes of every command, in one place (documented in README and --help). */
export enum ExitCode {
  /** Success; for gate: every budget held. */
  Ok = 0,
  /** gate: a budget failed. */
  GateFailed = 1,
  /** Bad command line: unknown flag, missing command, unparseable value. */
  Usage = 2,
  /** Bad input file or path: missing --data, corrupt profile or events file. */
  Input = 3,
  /** The environment cannot do what was asked (no permission, missing tool). */
  Environment = 4,
  /** The training job itself failed (non-zero exit, crash, timeout, never started). */
  JobFailed = 5,
  /** Interrupted by the user (SIGINT/SIGTERM); measured modes were saved. */
  Interrupted = 130,
}

/**
 * An error the user can fix. Its message is one line naming the cause and the fix;
 * the CLI prints it without a stack trace and exits with `exitCode`.
 */
export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = ExitCode.Usage,
  ) {
    super(message);
    this.name = 'UserError';
  }
}

/** Shorthand for an error in an input file or path. */
export function inputError(message: string): UserError {
  return new UserError(message, ExitCode.Input);
}
