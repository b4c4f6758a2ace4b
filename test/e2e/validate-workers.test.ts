import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateDataset } from '../../src/emulator/generate-dataset.js';
import { ValidateOutputSchema } from '../../src/schema/validate-output.js';
import { WhatifOutputSchema } from '../../src/schema/whatif-output.js';
import { emulatorArgv, startCli } from './helpers.js';

/**
 * validate --workers (issue 12): the emulated job, whose loader runs 1 worker
 * thread and whose prep sets its pace, is profiled, then run again at 2
 * workers through DSA_NUM_WORKERS; validate's prediction is whatif's at
 * --workers 2, and the point is measured, not faked.
 */
test('validate --workers reruns the job at another num_workers and compares with whatif --workers', async (t) => {
  const work = mkdtempSync(join(tmpdir(), 'dsa-e2e-validate-workers-'));
  t.after(() => rmSync(work, { recursive: true, force: true }));
  const data = join(work, 'data');
  await generateDataset(data, { files: 48, fileBytes: 64 * 1024, seed: 3 });
  const profile = join(work, 'p.json');
  const job = emulatorArgv(data, ['--batch-size', '4', '--compute-ms', '5', '--prep-ms', '8', '--workers', '1']);
  const profiled = await startCli(
    [
      'profile',
      '--data',
      data,
      '--out',
      profile,
      '--single-pass',
      '--precision',
      '10%',
      '--min-iterations',
      '20',
      '--max-iterations',
      '120',
      '--',
      ...job,
    ],
    { cwd: work },
  );
  assert.equal(profiled.exitCode, 0, profiled.all);

  const whatif = await startCli(['whatif', profile, '--workers', '2', '--json'], { cwd: work });
  assert.equal(whatif.exitCode, 0, whatif.all);
  const predicted = WhatifOutputSchema.parse(JSON.parse(whatif.stdout));
  assert.equal(predicted.prediction.scenario.workers, 2);

  const result = await startCli(
    ['validate', profile, '--workers', '2', '--no-control', '--max-iterations', '120', '--json'],
    { cwd: work },
  );
  assert.equal(result.exitCode, 0, result.all);
  const report = ValidateOutputSchema.parse(JSON.parse(result.stdout));
  const [point] = report.results;
  assert.deepEqual(point.point, { kind: 'workers', workers: 2 });
  assert.equal(point.status, 'measured', point.note);
  assert.match(point.note, /at 2 loader workers per rank/);
  assert.ok(
    Math.abs(point.predictedSamplesPerSec - predicted.prediction.samplesPerSec) < 1e-6,
    'validate predicts what whatif --workers does',
  );
  t.diagnostic(
    `1 worker (profiled) ${predicted.baseline.samplesPerSec.toFixed(1)} samples/s; 2 workers predicted ${point.predictedSamplesPerSec.toFixed(1)}, ` +
      `measured ${point.measuredSamplesPerSec?.toFixed(1)} ± ${point.measuredHalfWidth?.toFixed(1)} (${((point.relativeError ?? 0) * 100).toFixed(1)}%)`,
  );
  assert.ok(
    point.measuredSamplesPerSec! > predicted.baseline.samplesPerSec * 1.2,
    'the second worker was really there: the job ran faster',
  );
});
