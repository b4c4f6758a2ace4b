import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { KernelFile, parseKernelNumber, readTextOrNull } from '../../../src/system/kernel/read-text.js';

test("a kernel file's number: one non-negative integer, whitespace around it allowed, anything else null", () => {
  assert.equal(parseKernelNumber('8192\n'), 8192);
  assert.equal(parseKernelNumber('  0 '), 0);
  for (const text of [null, '', 'max\n', '-1', '12 34', '1e3', '0x10'])
    assert.equal(parseKernelNumber(text), null, JSON.stringify(text));
});

test('KernelFile reads a /proc file again from its start at each read, as readTextOrNull does', () => {
  const file = new KernelFile('/proc/self/stat');
  const first = file.read();
  assert.ok(first?.startsWith(`${process.pid} (`));
  assert.equal(file.read()?.split(' ')[0], String(process.pid));
  const meminfo = new KernelFile('/proc/meminfo');
  assert.match(meminfo.read() ?? '', /^MemTotal:/);
  assert.equal(meminfo.read()?.split('\n')[0], readTextOrNull('/proc/meminfo')?.split('\n')[0]);
  file.close();
  file.close();
  meminfo.close();
  assert.equal(new KernelFile('/proc/no-such-file').read(), null);
});

test("KernelFile on a process's /proc file fails once the process is reaped", async () => {
  const child = spawn('sleep', ['5'], { stdio: 'ignore' });
  const file = new KernelFile(`/proc/${child.pid}/stat`);
  assert.match(file.read() ?? '', /\(sleep\)/);
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  // Reaped by node: the descriptor's process is gone, whatever now holds its pid.
  assert.equal(file.read(), null);
});
