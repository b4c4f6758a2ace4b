import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateDataset } from '../../src/emulator/generate-dataset.js';
import { readProfile } from '../../src/store/profile-store.js';
import { emulatorArgv, FIXTURES, processesMentioning, startCli } from './helpers.js';

test('with nvidia-smi present, the profile records the GPUs and samples their utilisation and memory', async () => {
  const work = mkdtempSync(join(tmpdir(), 'dsa-e2e-gpu-'));
  const data = join(work, 'data');
  await generateDataset(data, { files: 16, fileBytes: 16 << 10, seed: 5 });
  const out = join(work, 'gpu.json');
  const result = await startCli(
    [
      'profile',
      '--data',
      data,
      '--out',
      out,
      '--modes',
      'synthetic',
      '--min-iterations',
      '20',
      '--precision',
      '20%',
      '--nvidia-smi',
      join(FIXTURES, 'fake-nvidia-smi'),
      '--',
      ...emulatorArgv(data, ['--compute-ms', '30', '--batch-size', '2']),
    ],
    { cwd: work },
  );
  assert.equal(result.exitCode, 0, result.all);
  const profile = readProfile(out);
  assert.equal(profile.host.gpus.length, 3);
  assert.equal(profile.host.gpus[0].model, 'NVIDIA A100-SXM4-40GB');
  const sampled = profile.modes.synthetic!.resources.filter((r) => r.gpuUtilPct !== undefined);
  assert.ok(sampled.length > 0, 'some resource samples carry GPU readings');
  // The fake reports 30% and 50% (and one GPU without readings): mean 40%, 4000 MiB in all.
  assert.equal(sampled[sampled.length - 1].gpuUtilPct, 40);
  assert.equal(sampled[sampled.length - 1].gpuMemBytes, 4000 * 2 ** 20);
  assert.deepEqual(sampled[sampled.length - 1].gpus, [
    { index: 0, utilPct: 30, memBytes: 1000 * 2 ** 20 },
    { index: 1, utilPct: 50, memBytes: 3000 * 2 ** 20 },
    { index: 2, utilPct: null, memBytes: null },
  ]);
  // The summary's GPUs table: a row per GPU, as sampled.
  assert.match(result.all, /^GPU 1\s+50% · peak 2\.9 GiB \(\d+\)$/m);
  assert.match(result.all, /^GPU 2\s+util — · memory — \(\d+\)$/m);
  assert.deepEqual(processesMentioning('fake-nvidia-smi'), [], 'the nvidia-smi sampler was stopped');
});
