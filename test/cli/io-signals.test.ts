/**
 * SIGTERM (a scheduler's stop, `kill`) and SIGHUP (a closed terminal) are the user's interrupt as Ctrl-C is: the
 * commands' handler gets each, so a run stopped so saves what it measured and stops its job's tree (the e2e Ctrl-C
 * tests hold what the handler does). Once removed, a signal ends the process as it would any other.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { execa } from 'execa';

const IO = new URL('../../src/cli/io.js', import.meta.url).href;

/** A process that registers the commands' handler, signals itself, and prints what the handler got. */
function script(signal: NodeJS.Signals, removeFirst: boolean): string {
  return `
import { processIo } from ${JSON.stringify(IO)};
const remove = processIo().onSignal((got) => { console.log('handled ' + got); process.exit(0); });
${removeFirst ? 'remove();' : ''}
process.kill(process.pid, ${JSON.stringify(signal)});
setTimeout(() => console.log('not signalled'), 2000);
`;
}

test('SIGINT, SIGTERM and SIGHUP reach the handler of a command as an interrupt', async () => {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const result = await execa(process.execPath, ['--input-type=module', '-e', script(signal, false)], {
      reject: false,
    });
    assert.equal(result.stdout.trim(), `handled ${signal}`, result.stderr);
    assert.equal(result.exitCode, 0);
  }
});

test('a removed handler leaves the signal its default: the process ends of it', async () => {
  const result = await execa(process.execPath, ['--input-type=module', '-e', script('SIGTERM', true)], {
    reject: false,
  });
  assert.equal(result.signal, 'SIGTERM');
  assert.equal(result.stdout, '');
});
