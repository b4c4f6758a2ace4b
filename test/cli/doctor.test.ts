import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { run } from '../../src/cli/main.js';
import { CAPABILITY_NAMES } from '../../src/system/probes/capability-text.js';
import { mountOf, parseMountinfo } from '../../src/system/kernel/mountinfo.js';
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

test('doctor --data names the file system of a dataset folder and what it cannot prove', async () => {
  const shm = existsSync('/dev/shm') ? '/dev/shm' : null;
  const io = fakeIo(tmpdir(), { ...process.env, DSA_NVIDIA_SMI: '/nonexistent/nvidia-smi' });
  const data = [tmpdir(), ...(shm ? [shm] : []), '/no/such/folder'];
  assert.equal(await run(['doctor', ...data.flatMap((d) => ['--data', d])], io), 0, io.err);
  assert.match(io.out, /dataset +file system +source +mounted at/);
  assert.match(io.out, /- --data \/no\/such\/folder: cannot be resolved/);
  // Only where /dev/shm itself is a tmpfs mount (any tmpfs elsewhere says nothing of it).
  const shmMount = shm ? mountOf(parseMountinfo(readFileSync('/proc/self/mountinfo', 'utf8')), realpathSync(shm)) : null;
  if (shmMount?.type === 'tmpfs') {
    assert.match(io.out, /--data \/dev\/shm is on tmpfs .*there is no cold mode to measure/);
  }
  const json = fakeIo(tmpdir(), { ...process.env, DSA_NVIDIA_SMI: '/nonexistent/nvidia-smi' });
  assert.equal(await run(['doctor', '--json', '--data', tmpdir()], json), 0, json.err);
  const parsed = JSON.parse(json.out) as { capabilities: unknown[]; dataset: { root: string; kind: string }[] };
  assert.deepEqual(parsed.capabilities.length, CAPABILITY_NAMES.length);
  assert.equal(parsed.dataset[0].root, tmpdir());
});
