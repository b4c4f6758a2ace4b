/** Exit codes of every command, in one place (documented in README and --help). */
export enum ExitCode {
  /** Success; for gate: every budget held. */
  Ok = 0,
  /** gate: a budget failed. */
  GateFailed = 1,
  /** Bad command line: no command, unknown flag, missing argument. */
  Usage = 2,
  /** A value that does not parse or is out of range: --storage-bw 50XB, --precision 0. */
  BadValue = 3,
  /** A path that does not exist or holds nothing usable: --data, a profile file. */
  MissingInput = 4,
  /** The training job itself failed (non-zero exit, crash, timeout, no iterations). */
  JobFailed = 5,
  /** The job's command does not exist or is not executable. */
  CommandNotFound = 6,
  /** A file that exists but is corrupt: an events file with no valid line, a bad profile. */
  CorruptFile = 7,
  /** The environment cannot do what was asked (no permission, missing kernel feature, a full disk). */
  Environment = 8,
  /** A bug in ds-analyzer: an error it did not expect (the message asks for a report). */
  Internal = 9,
  /** profile on several nodes: another node left, failed or never arrived; this node's measured modes were saved. */
  NodeLost = 10,
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

/** Shorthand for a missing or empty input path. */
export function inputError(message: string): UserError {
  return new UserError(message, ExitCode.MissingInput);
}

/** Shorthand for a value that does not parse. */
export function valueError(message: string): UserError {
  return new UserError(message, ExitCode.BadValue);
}
