// A reader that closes the pipe early (`ds-analyzer whatif --json | head`) must
// not turn into an unhandled EPIPE and a stack trace: the rest is dropped.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { CLI } from '../e2e/helpers.js';

const PROFILE = fileURLToPath(new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url));

test('whatif --json into a pipe closed before it writes: exit 0, no stack trace', async () => {
  const child = spawn(process.execPath, [CLI, 'whatif', PROFILE, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  // Close our end before the CLI has started: its writes meet a closed pipe.
  child.stdout.destroy();
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.equal(stderr, '');
  assert.equal(code, 0);
});
