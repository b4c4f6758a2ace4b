import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';

const MODULE = fileURLToPath(new URL('../../../src/system/kernel/personality.js', import.meta.url));

test('fixChildrenLayout: the processes started after it run without address-space randomisation', async (t) => {
  // In a process of its own: the flag stays on the process that sets it.
  const script =
    `const { fixChildrenLayout } = await import(${JSON.stringify(MODULE)});` +
    "const refused = fixChildrenLayout(); const { execFileSync } = await import('node:child_process');" +
    "console.log(JSON.stringify({ refused, child: execFileSync('cat', ['/proc/self/personality'], { encoding: 'utf8' }).trim() }));";
  const before = await execa('cat', ['/proc/self/personality']);
  const run = await execa(process.execPath, ['--input-type=module', '-e', script]);
  const { refused, child } = JSON.parse(run.stdout) as { refused: string | null; child: string };
  if (refused !== null) return t.skip(`this machine refuses the personality flag: ${refused}`);
  const ADDR_NO_RANDOMIZE = 0x0040000;
  assert.equal(Number.parseInt(child, 16) & ADDR_NO_RANDOMIZE, ADDR_NO_RANDOMIZE, `child's personality ${child}`);
  assert.equal(Number.parseInt(before.stdout, 16) & ADDR_NO_RANDOMIZE, 0, 'a process started without it is randomised');
});
