import type { Profile } from '../../src/schema/profile.js';
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { generateDataset } from '../../src/emulator/generate-dataset.js';
import { ExitCode } from '../../src/errors.js';
import { emulatorArgv, startCli } from './helpers.js';

const work = mkdtempSync(join(tmpdir(), 'dsa-e2e-gate-'));
const data = join(work, 'data');
const job = emulatorArgv(data, ['--batch-size', '4', '--compute-ms', '5', '--prep-ms', '1']);
const quick = ['--single-pass', '--precision', '10%', '--min-iterations', '20', '--max-iterations', '300'];

before(async () => {
  await generateDataset(data, { files: 32, fileBytes: 32 << 10, seed: 9 });
});

test('profile --gate profiles and gates in one command: a throughput budget the job cannot meet fails with exit 1', async () => {
  const config = join(work, 'budgets.json');
  writeFileSync(config, JSON.stringify({ budgets: { throughput: { level: 'error', min: 1e9 } } }));
  const junit = join(work, 'gate.xml');
  const result = await startCli(
    [
      'profile',
      '--data',
      data,
      '--out',
      join(work, 'p.json'),
      ...quick,
      '--gate',
      config,
      '--junit',
      junit,
      '--',
      ...job,
    ],
    { cwd: work },
  );
  assert.equal(result.exitCode, ExitCode.GateFailed, result.all);
  assert.match(result.all, /throughput/);
  const xml = new XMLParser({ ignoreAttributes: false }).parse(readFileSync(junit, 'utf8'));
  assert.ok(xml.testsuites, 'JUnit XML parses');
  // No throttle: the storage was read cold after the modes, at the loader's concurrency.
  const probe = (JSON.parse(readFileSync(join(work, 'p.json'), 'utf8')) as Profile).storageProbe!;
  assert.ok(probe, 'the profile has a storage probe');
  assert.equal(probe.proven, true, probe.reason);
  assert.equal(probe.files, 32);
  assert.ok(probe.storageBytes! >= 0.9 * 32 * (32 << 10) && probe.bytesPerSec > 0, JSON.stringify(probe));
});

test('profile --gate with a bad config fails before the job runs', async () => {
  const config = join(work, 'bad.json');
  writeFileSync(config, JSON.stringify({ budgets: { fetchStal: { level: 'error', max: '20%' } } }));
  const result = await startCli(
    ['profile', '--data', data, '--out', join(work, 'never.json'), '--gate', config, '--', ...job],
    { cwd: work },
  );
  assert.notEqual(result.exitCode, ExitCode.Ok);
  assert.match(result.all, /fetchStal/);
  assert.doesNotMatch(result.all, /starting the job/);
});
