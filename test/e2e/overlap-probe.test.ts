import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateDataset } from '../../src/emulator/generate-dataset.js';
import { EMULATOR_PRESETS } from '../../src/emulator/presets.js';
import { ExitCode } from '../../src/errors.js';
import { readProfile } from '../../src/store/profile-store.js';
import { fitOrFail } from '../whatif/fit-or-fail.js';
import { canThrottle, emulatorArgv, startCli } from './helpers.js';

// The emulated job's workers read a sample, then pre-process it, as a
// DataLoader worker does; throttled storage makes the cold mode keep storage
// busy, so only the probe can show how the two overlap.
test('profile --overlap runs the cold mode with a share of the dataset held resident, proves it, and whatif fits σ from it', async (t) => {
  const blocker = await canThrottle();
  if (blocker) return t.skip(`needs storage throttling (root and a writable cgroup blkio/io controller): ${blocker}`);
  const preset = EMULATOR_PRESETS.quick;
  const work = mkdtempSync(join(tmpdir(), 'dsa-e2e-overlap-'));
  const data = join(work, 'data');
  await generateDataset(data, { files: preset.files, fileBytes: preset.fileBytes, seed: 5 });
  const job = emulatorArgv(data, [
    '--batch-size',
    String(preset.batchSize),
    '--workers',
    String(preset.workers),
    '--compute-ms',
    String(preset.computeMs),
    '--prep-ms',
    String(preset.prepMs),
  ]);
  const out = join(work, 'p.json');
  const result = await startCli(
    [
      'profile',
      '--data',
      data,
      '--out',
      out,
      '--storage-bw',
      String(preset.storageBwBytesPerSec),
      '--overlap',
      '--precision',
      '5%',
      '--min-iterations',
      '40',
      '--max-iterations',
      '400',
      '--',
      ...job,
    ],
    { cwd: work },
  );
  assert.equal(result.exitCode, ExitCode.Ok, result.all);
  assert.match(result.stderr, /overlap probe \(cold, \d+% held resident\): ok/);
  const profile = readProfile(out);
  const probe = profile.overlapProbe!;
  assert.ok(probe, 'the probe is in the profile');
  assert.equal(probe.status, 'ok');
  assert.ok(probe.residentShare > 0.1 && probe.residentShare < 0.9, `held ${probe.residentShare}`);
  assert.equal(probe.state.proven, true, probe.state.reason);
  // It read about the part not held, and ran between fully cached and cold.
  assert.ok(Math.abs(probe.state.readFraction! - (1 - probe.residentShare)) <= 0.1, `read ${probe.state.readFraction}`);
  const iter = (m: { summary: { iterMs: { mean: number } } | null }) => m.summary!.iterMs.mean;
  assert.ok(
    iter(probe) < iter(profile.modes.cold!) && iter(probe) > 0.9 * iter(profile.modes.cached!),
    `probe ${iter(probe)} ms`,
  );
  assert.match(result.stdout, /overlap probe: cold with \d+% of the dataset held resident/);
  const model = fitOrFail(profile);
  assert.equal(model.overlapMeasured, true);
  assert.match(model.parameters.find((p) => p.symbol === 'σ')!.source, /overlap probe/);
});
