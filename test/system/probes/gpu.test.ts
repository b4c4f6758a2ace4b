import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  aggregateGpus,
  parseGpuLine,
  parseGpuList,
  probeGpus,
  startGpuSampler,
} from '../../../src/system/probes/gpu.js';

// Tests run from dist/test/system/probes; fixtures stay in the source tree.
const FAKE = fileURLToPath(new URL('../../../../test/fixtures/fake-nvidia-smi', import.meta.url));
const FAKE_FAIL = fileURLToPath(new URL('../../../../test/fixtures/fake-nvidia-smi-fail', import.meta.url));
chmodSync(FAKE, 0o755);
chmodSync(FAKE_FAIL, 0o755);
const MIB = 1024 * 1024;

test('parseGpuLine validates lines and tolerates [N/A]', () => {
  assert.deepEqual(parseGpuLine('0, 37, 1024, 16384'), {
    index: 0,
    utilPct: 37,
    memUsedBytes: 1024 * MIB,
    memTotalBytes: 16384 * MIB,
  });
  assert.deepEqual(parseGpuLine('3, [N/A], [N/A], 80'), {
    index: 3,
    utilPct: null,
    memUsedBytes: null,
    memTotalBytes: 80 * MIB,
  });
  for (const bad of [
    '',
    'garbage',
    '0, 1, 2',
    '0, 1, 2, 3, 4',
    'x, 1, 2, 3',
    '0, 20x, 2, 3',
    '0, -1, 2, 3',
    '0, , 2, 3',
  ]) {
    assert.equal(parseGpuLine(bad), null, bad);
  }
});

test('aggregateGpus: mean utilisation and summed memory over GPUs that report them', () => {
  assert.equal(aggregateGpus([]), null);
  const agg = aggregateGpus([
    { index: 0, utilPct: 20, memUsedBytes: 1, memTotalBytes: 9 },
    { index: 1, utilPct: 60, memUsedBytes: 2, memTotalBytes: 9 },
    { index: 2, utilPct: null, memUsedBytes: null, memTotalBytes: null },
  ]);
  assert.deepEqual(agg, { utilPct: 40, memBytes: 3, gpus: 3 });
});

test('parseGpuList splits at the last comma', () => {
  assert.deepEqual(parseGpuList('NVIDIA A100, PCIe, 40960\nTesla T4, [N/A]\nnonsense\n'), [
    { model: 'NVIDIA A100, PCIe', memBytes: 40960 * MIB },
    { model: 'Tesla T4', memBytes: null },
  ]);
});

test('startGpuSampler parses a fake nvidia-smi: utilisation and memory, bad lines skipped', async (t) => {
  const gpu = await startGpuSampler({ command: FAKE, intervalMs: 100 });
  t.after(() => gpu.stop());
  const deadline = Date.now() + 5000;
  while (gpu.readings().length < 3 && Date.now() < deadline) await sleep(25);
  const latest = gpu.latest();
  assert.ok(latest, 'no reading');
  assert.equal(latest.utilPct, 40);
  assert.equal(latest.memBytes, 4000 * MIB);
  assert.equal(latest.gpus, 3);
  assert.deepEqual(
    gpu.readings().map((r) => r.index),
    [0, 1, 2],
  );
  await gpu.stop();
});

test('startGpuSampler without nvidia-smi: no readings', async () => {
  const gpu = await startGpuSampler({ command: '/nonexistent/nvidia-smi', intervalMs: 100 });
  await sleep(200);
  assert.equal(gpu.latest(), null);
  await gpu.stop();
});

test('probeGpus: no GPUs when nvidia-smi is missing or fails; the list from a fake first on PATH', async (t) => {
  assert.deepEqual((await probeGpus('/nonexistent/nvidia-smi')).gpus, []);
  assert.equal((await probeGpus('/nonexistent/nvidia-smi')).status, 'missing');
  const failed = await probeGpus(FAKE_FAIL);
  assert.equal(failed.status, 'failed');
  assert.match(failed.detail, /NVIDIA driver/);
  assert.deepEqual(failed.gpus, []);

  const bin = mkdtempSync(join(tmpdir(), 'dsa-bin-'));
  symlinkSync(FAKE, join(bin, 'nvidia-smi'));
  const savedPath = process.env.PATH;
  process.env.PATH = `${bin}${delimiter}${savedPath ?? ''}`;
  t.after(() => {
    process.env.PATH = savedPath;
    rmSync(bin, { recursive: true, force: true });
  });
  const { gpus } = await probeGpus();
  assert.deepEqual(gpus, [
    { model: 'NVIDIA A100-SXM4-40GB', memBytes: 40960 * MIB },
    { model: 'NVIDIA A100-SXM4-40GB', memBytes: 40960 * MIB },
    { model: 'Tesla T4', memBytes: null },
  ]);
});
