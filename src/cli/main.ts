import { Command, CommanderError } from 'commander';
import { ExitCode, UserError } from '../errors.js';
import type { Io } from './io.js';

export async function run(argv: string[], io: Io): Promise<number> {
  const program = new Command('ds-analyzer');
  program.exitOverride();
  try {
    await program.parseAsync(argv, { from: 'user' });
    return ExitCode.Ok;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? ExitCode.Ok : ExitCode.Usage;
    if (error instanceof UserError) {
      io.stderr(`ds-analyzer: ${error.message}\n`);
      return error.exitCode;
    }
    throw error;
  }
}
