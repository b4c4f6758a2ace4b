import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readProfile } from '../../src/store/profile-store.js';
import { ExitCode } from '../../src/errors.js';
import { processesMentioning, PYTHON, startCli, torchMissing, writeClassFolders } from './helpers.js';

/**
 * profile --workers on an unmodified torchvision DatasetFolder script (issue
 * 12): the hook overrides the script's num_workers=0 at each count, each
 * count runs twice in the mirrored schedule, and the profile records what the
 * job ran, with the training process's own CPU apart. Needs /usr/bin/python3
 * with torch and torchvision; skips with the reason otherwise.
 */
const SCRIPT = fileURLToPath(new URL('../../../test/fixtures/datasetfolder-train.py', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'dsa-e2e-workers-'));
const data = join(work, 'data');
let skipReason: string | null = null;

before(async () => {
  skipReason = await torchMissing();
  if (skipReason) return;
  writeClassFolders(data, { classes: 4, perClass: 48, fileBytes: 96 * 1024 });
});

after(() => rmSync(work, { recursive: true, force: true }));

test('profile --workers 1,2 sweeps num_workers of an unmodified DataLoader script in the mirrored schedule', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const out = join(work, 'profile.json');
  const result = await startCli(
    [
      'profile',
      '--data',
      data,
      '--modes',
      'cached',
      '--workers',
      '1,2',
      '--min-iterations',
      '20',
      '--max-iterations',
      '60',
      '--precision',
      '20%',
      '--out',
      out,
      '--',
      PYTHON,
      SCRIPT,
      data,
      '--batch',
      '8',
    ],
    { cwd: work, env: { PATH: process.env.PATH ?? '' } },
  );
  assert.equal(result.exitCode, ExitCode.Ok, result.all);
  const profile = readProfile(out);
  const cached = profile.modes.cached!;
  assert.equal(cached.ranks[0].workers, 0, "the modes keep the script's own num_workers");
  assert.equal(cached.ranks[0].loader?.scriptWorkers, undefined);
  assert.ok(cached.ranks[0].mainCpuMsPerSample! > 0, 'the training process reports its own CPU');

  const sweep = profile.workersSweep!;
  assert.deepEqual(
    sweep.map((r) => r.workersAsked),
    [1, 2],
  );
  assert.deepEqual(
    sweep.map((r) => r.ranks[0].workers),
    [1, 2],
  );
  assert.deepEqual(
    sweep.map((r) => r.ranks[0].loader?.scriptWorkers),
    [0, 0],
  );
  assert.deepEqual(
    sweep.map((r) => r.passes?.map((p) => p.label)),
    [
      ['cached-1workers', 'cached-1workers-2'],
      ['cached-2workers', 'cached-2workers-2'],
    ],
  );
  for (const point of sweep) assert.equal(point.state.proven, true, point.state.reason);
  assert.deepEqual(processesMentioning(SCRIPT), [], 'no job process left behind');
  t.diagnostic(
    `per iteration: script (0 workers) ${cached.summary!.iterMs.mean.toFixed(1)} ms; ` +
      sweep
        .map(
          (r) =>
            `${r.workersAsked} workers ${r.summary!.iterMs.mean.toFixed(1)} ± ${r.summary!.iterMs.halfWidth?.toFixed(1)} ms`,
        )
        .join('; ') +
      `; main process ${cached.ranks[0].mainCpuMsPerSample!.toFixed(2)} ms CPU per sample`,
  );
});
