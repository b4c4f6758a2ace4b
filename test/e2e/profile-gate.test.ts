import type { Profile } from '../../src/schema/profile.js';
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { generateDataset } from '../../src/emulator/generate-dataset.js';
import { run } from '../../src/cli/main.js';
import { ExitCode } from '../../src/errors.js';
import { fakeIo } from '../cli/fake-io.js';
import { emulatorArgv, FIXTURES, processesMentioning, startCli } from './helpers.js';

const work = mkdtempSync(join(tmpdir(), 'dsa-e2e-gate-'));
const data = join(work, 'data');
const job = emulatorArgv(data, ['--batch-size', '4', '--compute-ms', '5', '--prep-ms', '1']);
const quick = ['--single-pass', '--precision', '10%', '--min-iterations', '20', '--max-iterations', '300'];

before(async () => {
  await generateDataset(data, { files: 32, fileBytes: 32 << 10, seed: 9 });
});

/**
 * One profile run checks three flags that need a real job and no timing: --gate (a budget the job cannot meet),
 * --nvidia-smi (a fake that reports three GPUs) and --overlap (the cold mode again with a share held resident; its
 * proof and its use by the what-if: test/e2e/known-cost.test.ts).
 */
test('profile --gate profiles and gates in one command: a throughput budget the job cannot meet fails with exit 1; with nvidia-smi present the profile records the GPUs and samples them; --overlap runs the probe', async () => {
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
      '--nvidia-smi',
      join(FIXTURES, 'fake-nvidia-smi'),
      '--overlap',
      '--',
      ...job,
    ],
    { cwd: work },
  );
  assert.equal(result.exitCode, ExitCode.GateFailed, result.all);
  checkGpus(result.all, JSON.parse(readFileSync(join(work, 'p.json'), 'utf8')) as Profile);
  const overlap = (JSON.parse(readFileSync(join(work, 'p.json'), 'utf8')) as Profile).overlapProbe;
  // Unthrottled local reads may take no longer than the prep: then the probe is moot, and says so (its run on
  // throttled storage: known-cost.test.ts).
  if (overlap) {
    assert.ok(overlap.residentShare > 0 && overlap.residentShare < 1, 'profile --overlap ran the probe');
    assert.match(result.all, /overlap probe \(cold, \d+% held resident\)/);
  } else assert.match(result.all, /overlap probe not run: reads take no longer than pre-processing/);
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
  // In-process: the spawned CLI's error path is the first test's.
  const io = fakeIo(work);
  const exitCode = await run(
    ['profile', '--data', data, '--out', join(work, 'never.json'), '--gate', config, '--', ...job],
    io,
  );
  assert.notEqual(exitCode, ExitCode.Ok);
  assert.match(io.err, /fetchStal/);
  assert.doesNotMatch(io.out + io.err, /starting the job/);
  assert.ok(!existsSync(join(work, 'never.json')), 'no profile');
});

/** The GPUs of the fake nvidia-smi (test/fixtures/fake-nvidia-smi) in the profile and its summary. */
function checkGpus(output: string, profile: Profile): void {
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
  // The summary's GPUs table: a row per GPU, as sampled, a column per mode.
  assert.match(output, /^GPU 1\s+50% · peak 2\.9 GiB \(\d+\)\s+50% · peak 2\.9 GiB \(\d+\)/m);
  assert.match(output, /^GPU 2\s+util — · memory — \(\d+\)\s+util — · memory — \(\d+\)/m);
  assert.deepEqual(processesMentioning('fake-nvidia-smi'), [], 'the nvidia-smi sampler was stopped');
}
