import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../src/cli/main.js';
import { ExitCode } from '../../src/errors.js';
import { expectOneLineError, fakeIo } from './fake-io.js';
import { threadCpuClock } from '../../src/system/kernel/cpu-ledger.js';

const FIXTURE = new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url);
const dir = mkdtempSync(join(tmpdir(), 'dsa-whatif-'));
mkdirSync(join(dir, 'profiles'));
copyFileSync(FIXTURE, join(dir, 'profiles', 'job.json'));
const profile = JSON.parse(readFileSync(FIXTURE, 'utf8'));
delete profile.modes.cold;
writeFileSync(join(dir, 'no-cold.json'), JSON.stringify(profile));

function expectError(args: string[], code: ExitCode, pattern: RegExp) {
  return expectOneLineError(dir, ['whatif', ...args], code, pattern);
}

test('whatif on the newest profile prints the prediction, answers, sweeps and parameters', async () => {
  const io = fakeIo(dir);
  // This thread's CPU: the process's counts the other threads of a test process shared with other files.
  const clock = threadCpuClock();
  const started = clock();
  assert.equal(await run(['whatif', '--cache', '8MB', '--cpus', '4'], io), ExitCode.Ok, io.err);
  assert.ok(clock() - started < 1, 'well under a second of CPU');
  for (const text of [
    'throughput, samples/s',
    'bottleneck',
    "page cache (Linux's active and inactive lists): a cache of",
    'MinIO cache',
    'CPUs:',
    'storage:',
    'Cache sweep',
    'CPU sweep',
    'B_storage',
    'storageReadBytesPerSec',
    'linear scaling assumed',
  ]) {
    assert.ok(io.out.includes(text), `output has '${text}'`);
  }
  assert.match(io.out, /cache 7\.6 MiB\*/);
});

test('--json prints only the result, parameters with sources', async () => {
  const io = fakeIo(dir);
  assert.equal(
    await run(
      [
        'whatif',
        join(dir, 'profiles', 'job.json'),
        '--gpus',
        '2',
        '--gpu-speedup',
        '1.5',
        '--cache-policy',
        'minio',
        '--storage-bw',
        '200MB/s',
        '--epochs',
        '3',
        '--json',
      ],
      io,
    ),
    ExitCode.Ok,
    io.err,
  );
  const result = JSON.parse(io.out);
  assert.equal(result.prediction.scenario.gpus, 2);
  assert.equal(result.prediction.scenario.gpuSpeedup, 1.5);
  assert.equal(result.prediction.scenario.cachePolicy, 'minio');
  assert.equal(result.prediction.scenario.storageBytesPerSec, 200e6);
  assert.equal(result.prediction.basis, 'mean over 3 epochs, the first cold');
  assert.ok(result.parameters.every((p: { source: string }) => p.source.length > 0));
  assert.equal(result.cacheSweep.length, 11);
});

test("--cache 0 (no cache) and --cache 50% (of the profile's dataset) answer, like validate's sizes", async () => {
  const datasetBytes: number = profile.dataset.bytes;
  const answers: Record<string, { cacheBytes: number; iterMs: number; hit: number }> = {};
  for (const cache of ['0', '50%', '100%']) {
    const io = fakeIo(dir);
    assert.equal(await run(['whatif', '--cache', cache, '--json'], io), ExitCode.Ok, io.err);
    const { prediction } = JSON.parse(io.out);
    answers[cache] = {
      cacheBytes: prediction.scenario.cacheBytes,
      iterMs: prediction.iterMs,
      hit: prediction.hitRatio,
    };
    assert.ok(
      Number.isFinite(prediction.iterMs) && prediction.iterMs > 0,
      `${cache}: an iteration time, got ${prediction.iterMs}`,
    );
  }
  assert.equal(answers['0'].cacheBytes, 0);
  assert.equal(answers['0'].hit, 0, 'no cache, no hits: every read from storage');
  assert.equal(answers['50%'].cacheBytes, Math.round(datasetBytes / 2));
  assert.equal(answers['100%'].cacheBytes, datasetBytes);
  // Less cache can only mean more reads from storage: the iteration is no faster.
  assert.ok(
    answers['0'].iterMs >= answers['50%'].iterMs && answers['50%'].iterMs >= answers['100%'].iterMs,
    JSON.stringify(answers),
  );
  assert.ok(
    answers['0'].iterMs > answers['100%'].iterMs,
    `the fixture is fetch-bound cold, so no cache is slower: ${JSON.stringify(answers)}`,
  );

  for (const cache of ['0', '50%']) {
    const io = fakeIo(dir);
    assert.equal(await run(['whatif', '--cache', cache], io), ExitCode.Ok, io.err);
    assert.match(io.out, /throughput, samples\/s/);
    assert.match(io.out, cache === '0' ? /cache 0 B\*/ : /cache [\d.]+ [KM]iB\*/);
    assert.equal(io.err, '');
  }
});

test('a profile without the cold mode answers --workers, --cpus and the accelerator, and names what it cannot answer in one line', async () => {
  for (const args of [['--workers', '8'], ['--cpus', '8'], ['--gpus', '2', '--gpu-speedup', '2'], []]) {
    const io = fakeIo(dir);
    assert.equal(
      await run(['whatif', join(dir, 'no-cold.json'), ...args], io),
      ExitCode.Ok,
      `${args.join(' ')}: ${io.err}`,
    );
    assert.match(io.out, /throughput, samples\/s/);
    assert.match(io.out, /storage not measured/);
    const unanswered = io.out.split('\n').filter((l) => l.includes('need the cold mode'));
    assert.equal(unanswered.length, 1, `one line names what the cold mode would answer: ${io.out}`);
    assert.doesNotMatch(io.out, /Cache sweep/);
  }
  const io = fakeIo(dir);
  assert.equal(
    await run(['whatif', join(dir, 'no-cold.json'), '--workers', '8', '--cache', '0', '--json'], io),
    ExitCode.Ok,
    io.err,
  );
  const result = JSON.parse(io.out);
  assert.deepEqual(result.changed, ['workers']);
  assert.equal(result.prediction.scenario.workers, 8);
  assert.match(result.unanswered[0], /^not answered: --cache needs the cold mode/);
  assert.ok(
    result.recommendations.every((r: { kind: string }) => r.kind === 'cpus' || r.kind === 'workers'),
    JSON.stringify(result.recommendations.map((r: { kind: string }) => r.kind)),
  );
});

test('bad values name the flag (exit code 3)', async () => {
  await expectError(['--cache', '64X'], ExitCode.BadValue, /--cache '64X'/);
  await expectError(['--cache', '150%'], ExitCode.BadValue, /--cache '150%': a share of the dataset is at most 100%/);
  await expectError(
    ['--cache', 'half'],
    ExitCode.BadValue,
    /cannot parse --cache 'half': use bytes with a unit \(64G, 512MiB, 1\.5TB\), a share of the dataset \(50%\), or 0/,
  );
  await expectError(['--cpus', '-2'], ExitCode.BadValue, /--cpus must be a positive number/);
  await expectError(['--cpus', '1.5'], ExitCode.BadValue, /--cpus must be a whole number/);
  await expectError(['--gpus', '0'], ExitCode.BadValue, /--gpus/);
  await expectError(['--gpu-speedup', '-1'], ExitCode.BadValue, /--gpu-speedup/);
  await expectError(['--storage-bw', 'fast'], ExitCode.BadValue, /--storage-bw 'fast'/);
  await expectError(['--cache-policy', 'lfu'], ExitCode.BadValue, /--cache-policy: unknown policy 'lfu'/);
  await expectError(['--epochs', '0'], ExitCode.BadValue, /--epochs/);
});

test('a profile missing a mode, or no profile at all, is one line naming what is missing (exit code 4)', async () => {
  // Without the cold mode only a question that asks nothing but the cache or storage is refused (more:
  // test/whatif/without-cold.test.ts).
  await expectError(
    [join(dir, 'no-cold.json'), '--cache', '50%', '--storage-bw', '100MB/s'],
    ExitCode.MissingInput,
    /^ds-analyzer: not answered: --cache and --storage-bw need the cold mode \(the profile lacks modes\.cold\)/,
  );
  await expectError([join(dir, 'nope.json')], ExitCode.MissingInput, /does not exist/);
  await expectError(['--profiles-dir', join(dir, 'empty')], ExitCode.MissingInput, /no profile in/);
});

test('whatif --help has examples and exit codes', async () => {
  const io = fakeIo(dir);
  assert.equal(await run(['whatif', '--help'], io), ExitCode.Ok);
  assert.match(io.out, /Examples:/);
  assert.match(io.out, /Exit codes:/);
  assert.match(io.out, /--cache-policy/);
});

test('--matrix sets the CPUs and cache knobs cell by cell: given beside it, --cpus or --cache is a usage error', async () => {
  await expectError(['--matrix', '--cpus', '4'], ExitCode.Usage, /--matrix sets CPUs and cache per cell/);
  await expectError(['--matrix', '--cache', '50%'], ExitCode.Usage, /--matrix sets CPUs and cache per cell/);
  await expectError(['--matrix-cache', '50%'], ExitCode.Usage, /add --matrix/);
  const io = fakeIo(dir);
  assert.equal(await run(['whatif', '--matrix', '--matrix-cpus', '1,2', '--matrix-cache', '0,50%'], io), 0, io.err);
});
