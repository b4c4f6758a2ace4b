/**
 * The commands loaded by name (src/cli/commands.ts) are the program's
 * commands: each name builds the command of that name, and a run of one
 * command builds that command alone, as the whole program would.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allCommands, COMMAND_NAMES, commandNamed } from '../../src/cli/commands.js';
import { run } from '../../src/cli/main.js';
import { fakeIo } from './fake-io.js';

test('each command name loads the factory of the command of that name, in --help order', async () => {
  const result = { exitCode: 0 };
  const io = fakeIo(process.cwd());
  const all = await allCommands();
  assert.deepEqual(
    all.map((factory) => factory(io, result).name()),
    COMMAND_NAMES,
  );
  for (const name of COMMAND_NAMES) assert.equal((await commandNamed(name))!(io, result).name(), name);
  assert.equal(await commandNamed('nope'), null);
  assert.equal(await commandNamed('toString'), null, 'no inherited name is a command');
});

test('a run of one command, of --help, --version and an unknown command print what the whole program prints', async () => {
  const all = await allCommands();
  for (const argv of [
    ['whatif', '--help'],
    ['gate', '--help'],
    ['--version'],
    ['--help'],
    ['nope'],
    ['whatif', '--nope'],
    ['help', 'gate'],
    [],
  ]) {
    const lazy = fakeIo(process.cwd());
    const whole = fakeIo(process.cwd());
    assert.equal(await run(argv, lazy), await run(argv, whole, all), argv.join(' '));
    assert.equal(lazy.out, whole.out, argv.join(' '));
    assert.equal(lazy.err, whole.err, argv.join(' '));
  }
});
