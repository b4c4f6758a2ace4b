import { Command, CommanderError } from 'commander';
import { ExitCode, isDiskFull, UserError } from '../errors.js';
import { TOOL_VERSION } from '../version.js';
import type { Io } from './io.js';
import { EXIT_CODES_HELP, type CommandFactory, type CommandResult } from './program.js';
import { allCommands, commandNamed } from './commands.js';

/**
 * The commands a run of `argv` needs: the one it names (its flags, help and errors are its own), none for --version,
 * every one otherwise (--help, no command, an unknown one, a flag before the command). Each command's module is loaded
 * on demand (commands.ts), so a run loads only its own.
 */
async function commandsFor(argv: readonly string[]): Promise<readonly CommandFactory[]> {
  const first = argv[0];
  if (argv.length === 1 && (first === '--version' || first === '-V')) return [];
  const named = first === undefined ? null : await commandNamed(first);
  return named ? [named] : allCommands();
}

/**
 * The whole command-line program: `commands` (allCommands() for every one), with output through `io` and the outcome in
 * `result`. docs/cli.md is generated from it (scripts/gen-cli-docs.ts); a test may put a command with fakes in place of
 * the real one.
 */
export function buildProgram(io: Io, result: CommandResult, commands: readonly CommandFactory[]): Command {
  const program = new Command('ds-analyzer')
    .description('find out why a training job waits for data: fetch stalls (storage) versus prep stalls (CPU)')
    .version(TOOL_VERSION)
    .enablePositionalOptions()
    .addHelpText(
      'after',
      `
Examples:
  $ ds-analyzer demo
  $ ds-analyzer profile --data ./imagenet/train -- python train.py -a resnet18 ./imagenet
  $ ds-analyzer doctor
${EXIT_CODES_HELP}`,
    );
  for (const factory of commands) program.addCommand(factory(io, result));
  for (const command of [program, ...program.commands]) {
    command.exitOverride().configureOutput({
      writeOut: io.stdout,
      writeErr: io.stderr,
      outputError: (text, write) => write(`ds-analyzer: ${text.replace(/^error: /, '')}`),
    });
    if (command !== program) command.showHelpAfterError(`(see 'ds-analyzer ${command.name()} --help')`);
    // The training command follows `profile`: its own flags must reach it untouched.
    if (command.name() === 'profile') command.passThroughOptions();
  }
  return program;
}

/**
 * Parses argv, runs one command and returns its exit code; never calls process.exit. Without `commands`, those argv
 * needs (every command where it names none).
 */
export async function run(argv: string[], io: Io, commands?: readonly CommandFactory[]): Promise<number> {
  const result: CommandResult = { exitCode: ExitCode.Ok };
  const program = buildProgram(io, result, commands ?? (await commandsFor(argv)));
  if (argv.length === 0) {
    io.stderr(program.helpInformation());
    return ExitCode.Usage;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return result.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? ExitCode.Ok : ExitCode.Usage;
    if (error instanceof UserError) {
      io.stderr(`ds-analyzer: ${error.message}\n`);
      return error.exitCode;
    }
    // A full disk is the environment, not a bug, wherever it struck.
    if (isDiskFull(error)) {
      const where = (error as NodeJS.ErrnoException).path;
      io.stderr(
        `ds-analyzer: no space left on the device${where ? ` of ${where}` : ''}: free space there, or write elsewhere ` +
          `(profile --out or --profiles-dir, report --out-dir)\n`,
      );
      return ExitCode.Environment;
    }
    // A bug of ours: one line for the user, the stack only on request.
    const message = error instanceof Error ? error.message : String(error);
    io.stderr(`ds-analyzer: internal error: ${message} (set DSA_DEBUG=1 for the stack; please report it)\n`);
    if (io.env.DSA_DEBUG && error instanceof Error) io.stderr(`${error.stack}\n`);
    return ExitCode.Internal;
  }
}
