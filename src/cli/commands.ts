/**
 * Every command of the program, in --help's order, and each one's module loaded by name: a run of one command
 * (`ds-analyzer whatif ...`) loads that command's module only (main.ts), as its flags and help are all it needs;
 * --help, docs/cli.md and an unknown command get them all (COMMAND_NAMES, allCommands). test/cli/commands.test.ts
 * checks the names against the commands the factories build.
 */
import type { CommandFactory } from './program.js';

/** Each command's factory by its name, in --help's order, loaded on demand. */
const LOADERS: Record<string, () => Promise<CommandFactory>> = {
  profile: async () => (await import('./profile.js')).profileCommand,
  demo: async () => (await import('./demo.js')).demoCommand,
  doctor: async () => (await import('./doctor.js')).doctorCommand,
  whatif: async () => (await import('./whatif.js')).whatifCommand,
  validate: async () => (await import('./validate.js')).validateCommand,
  gate: async () => (await import('./gate.js')).gateCommand,
  compare: async () => (await import('./compare.js')).compareCommand,
  report: async () => (await import('./report.js')).reportCommand,
  export: async () => (await import('./export.js')).exportCommand,
  clean: async () => (await import('./clean.js')).cleanCommand,
};

/** The commands' names, in --help's order. */
export const COMMAND_NAMES: readonly string[] = Object.keys(LOADERS);

/** The factory of the command named `name`, or null when no command has that name. */
export async function commandNamed(name: string): Promise<CommandFactory | null> {
  return Object.hasOwn(LOADERS, name) ? LOADERS[name]() : null;
}

/** Every command's factory, in --help's order. */
export async function allCommands(): Promise<CommandFactory[]> {
  return Promise.all(COMMAND_NAMES.map((name) => LOADERS[name]()));
}
