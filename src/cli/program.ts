import type { Command } from 'commander';
import { EXIT_CODES, EXIT_CODE_TEXT, type ExitCode } from '../errors.js';
import { wrapLine } from '../report/format.js';
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

/** An exit code a command can return, and what it means there where that says more than the general text. */
export interface ExitCodeUse {
  /** The code. */
  code: ExitCode;
  /** Its meaning for this command; the general text (EXIT_CODE_TEXT) when absent. */
  meaning?: string;
}

/** A command's exit codes: a bare code means what EXIT_CODE_TEXT says. */
export type ExitCodeList = readonly (ExitCode | ExitCodeUse)[];

const declaredExitCodes = new WeakMap<Command, readonly ExitCodeUse[]>();

/**
 * Declares the exit codes a command can return and appends them to its --help. Call it last, after the command's other
 * help text. docs/cli.md and its test read the same list back (exitCodesOf), so help and docs cannot disagree on it.
 */
export function withExitCodes(command: Command, uses: ExitCodeList): Command {
  const list = uses.map((use) => (typeof use === 'number' ? { code: use } : use)).sort((a, b) => a.code - b.code);
  declaredExitCodes.set(command, list);
  return command.addHelpText('after', exitCodesHelp(list));
}

/** The exit codes a command declared with withExitCodes; undefined where it declared none. */
export function exitCodesOf(command: Command): readonly ExitCodeUse[] | undefined {
  return declaredExitCodes.get(command);
}

/** The 'Exit codes:' block of a --help. */
export function exitCodesHelp(uses: readonly ExitCodeUse[], title = 'Exit codes:'): string {
  // Each meaning wrapped at 79 columns, its continuation lines under its first word.
  const lines = uses.map(({ code, meaning }) =>
    wrapLine(`  ${String(code).padEnd(4)}`, meaning ?? EXIT_CODE_TEXT[code], '       ', 79).join('\n'),
  );
  return `\n${title}\n${lines.join('\n')}`;
}

/** Every exit code, for the top-level --help. */
export const EXIT_CODES_HELP = exitCodesHelp(
  EXIT_CODES.map((code) => ({ code })),
  "Exit codes (each command's --help lists those it can return):",
);
