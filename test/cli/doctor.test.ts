import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { run } from '../../src/cli/main.js';
import { CAPABILITY_NAMES } from '../../src/system/capability-text.js';
import { fakeIo } from './fake-io.js';

test('doctor lists every capability with what was found, and for each missing one its cost and fix', async () => {
  const io = fakeIo(tmpdir(), { ...process.env, DSA_NVIDIA_SMI: '/nonexistent/nvidia-smi' });
  assert.equal(await run(['doctor', '--json'], io), 0, io.err);
  const rows = JSON.parse(io.out) as { name: string; available: boolean; detail: string; impact: string; fix: string }[];
  assert.deepEqual(rows.map((r) => r.name), [...CAPABILITY_NAMES]);
  const gpu = rows.find((r) => r.name === 'nvidia-smi')!;
  assert.equal(gpu.available, false, 'a missing nvidia-smi is reported as missing');
  for (const row of rows) {
    assert.ok(row.detail.length > 0, row.name);
    assert.ok(row.impact.length > 0 && row.fix.length > 0, row.name);
  }
  const text = fakeIo(tmpdir(), { ...process.env, DSA_NVIDIA_SMI: '/nonexistent/nvidia-smi' });
  assert.equal(await run(['doctor'], text), 0);
  assert.match(text.out, /What is missing, and what it costs:\n- nvidia-smi: /);
});
