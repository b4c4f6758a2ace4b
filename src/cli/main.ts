import { Command, CommanderError } from 'commander';
import { ExitCode, UserError } from '../errors.js';
import { isDiskFull } from '../store/free-space.js';
import { TOOL_VERSION } from '../version.js';
import type { Io } from './io.js';
import { EXIT_CODES_HELP, type CommandFactory, type CommandResult } from './program.js';
import { profileCommand } from './profile.js';
import { demoCommand } from './demo.js';
import { doctorCommand } from './doctor.js';
import { validateCommand } from './validate.js';
import { whatifCommand } from './whatif.js';
import { gateCommand } from './gate.js';
import { compareCommand } from './compare.js';
import { reportCommand } from './report.js';
import { cleanCommand } from './clean.js';

const COMMANDS: CommandFactory[] = [profileCommand, demoCommand, doctorCommand, whatifCommand, validateCommand, gateCommand, compareCommand, reportCommand, cleanCommand];

/**
 * The whole command-line program: every command, with output through `io`
 * and the outcome in `result`. docs/cli.md is generated from it
 * (scripts/gen-cli-docs.ts); `commands` lets a test put a command with fakes
 * in place of the real one.
 */
export function buildProgram(io: Io, result: CommandResult, commands: readonly CommandFactory[] = COMMANDS): Command {
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

/** Parses argv, runs one command and returns its exit code; never calls process.exit. */
export async function run(argv: string[], io: Io, commands: readonly CommandFactory[] = COMMANDS): Promise<number> {
  const result: CommandResult = { exitCode: ExitCode.Ok };
  const program = buildProgram(io, result, commands);
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
