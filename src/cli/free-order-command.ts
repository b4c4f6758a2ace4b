import { Command } from 'commander';

/**
 * A command whose options may follow its arguments (`gate p.json --junit x`).
 * main.ts turns on passThroughOptions for every subcommand, which `profile`
 * needs for the training command after `--`; for commands that take only
 * files that would make every option after the first file an argument.
 */
export class FreeOrderCommand extends Command {
  override passThroughOptions(): this {
    return this;
  }
}
