import { Command } from 'commander';
import type { Io } from './io.js';

/** A command's outcome travels through this box: commander actions return nothing. */
export interface CommandResult {
  exitCode: number;
}

/** Each command file exports one of these. */
export type CommandFactory = (io: Io, result: CommandResult) => Command;

/** Collects a repeatable option into an array. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** Exit-code table shown at the end of every --help. */
export const EXIT_CODES_HELP = `
Exit codes:
  0    success (gate: every budget held)
  1    gate: a budget failed
  2    usage error (no command, unknown flag)
  3    a value does not parse (size, rate, number)
  4    a path is missing (--data, profile file)
  5    the training job failed (measured modes are saved)
  6    the job's command was not found
  7    a corrupt file (events with no valid line, malformed profile)
  8    the environment cannot do it (permissions, kernel features, a full disk)
  9    internal error: a bug in ds-analyzer (please report it)
  10   profile on several nodes: another node left, failed or never arrived (measured modes are saved)
  130  interrupted (measured modes are saved)`;
