/**
 * Exit codes of every command, in one place. Each command's --help lists the ones it can return (src/cli/program.ts
 * `withExitCodes`); docs/cli.md has the whole table, generated from the same lists.
 */
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
  /** The training job itself failed (non-zero exit, crash, timeout, no iterations), hung, or its data stalled. */
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
  /** doctor --require: a capability asked for is missing on this machine. */
  MissingCapability = 11,
  /** Interrupted by the user (SIGINT/SIGTERM); measured modes were saved. */
  Interrupted = 130,
}

/** What each exit code means, one line each, for --help and docs/cli.md. */
export const EXIT_CODE_TEXT: Record<ExitCode, string> = {
  [ExitCode.Ok]: 'success',
  [ExitCode.GateFailed]: 'a gate budget failed',
  [ExitCode.Usage]: 'usage error: no command, an unknown flag, a flag missing the flag it needs',
  [ExitCode.BadValue]: 'a value does not parse or is out of range (size, rate, number, a config value)',
  [ExitCode.MissingInput]:
    'an input is missing: a --data path, a profile or config file; or the profile lacks a mode the what-if model needs',
  [ExitCode.JobFailed]: 'the training job failed, hung or its data stalled (measured modes are saved)',
  [ExitCode.CommandNotFound]: "the job's command was not found",
  [ExitCode.CorruptFile]: 'a corrupt file (events with no valid line, a malformed profile)',
  [ExitCode.Environment]: 'the environment cannot do it (permissions, kernel features, a full disk)',
  [ExitCode.Internal]: 'internal error: a bug in ds-analyzer (please report it)',
  [ExitCode.NodeLost]:
    'profile on several nodes: another node left, failed or never arrived (measured modes are saved)',
  [ExitCode.MissingCapability]: 'doctor --require: a capability asked for is missing',
  [ExitCode.Interrupted]: 'interrupted (measured modes are saved)',
};

/** Every exit code, in numeric order. */
export const EXIT_CODES: readonly ExitCode[] = (
  Object.values(ExitCode).filter((v) => typeof v === 'number') as ExitCode[]
).sort((a, b) => a - b);

/**
 * An error the user can fix. Its message is one line naming the cause and the fix; the CLI prints it without a stack
 * trace and exits with `exitCode`.
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

/** Whether an error is the file system saying it is full (ENOSPC), or the user's quota is (EDQUOT). */
export function isDiskFull(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}
