import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { readProfile } from '../../src/store/profile-store.js';
import { run } from '../../src/cli/main.js';
import { ExitCode } from '../../src/errors.js';
import { fakeIo } from '../cli/fake-io.js';
import { PYTHON, startCli, torchMissing } from './helpers.js';
import { freePort } from '../support/free-port.js';

/**
 * WebDataset-format tar shards served by a real HTTP server (Python's
 * http.server) and read by an IterableDataset that streams each shard with
 * urllib (examples/remote/wds_train.py): one object holds many samples, so
 * the profiler counts the samples of a shard to know what a sample costs.
 */
const EXAMPLES = fileURLToPath(new URL('../../../examples/remote/', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'dsa-e2e-shards-'));
const SHARDS = 8;
const PER_SHARD = 24;
const SAMPLE_BYTES = 128 * 1024;
// A narrow model (8 channels, not 32): the step is not what these tests hold, and at 32 it was most of an iteration.
const NARROW = ['--width', '8'];
const quick = ['--single-pass', '--precision', '10%', '--min-iterations', '20', '--max-iterations', '60'];

let skipReason: string | null = null;
let server: ResultPromise | null = null;
let base = '';

before(async () => {
  skipReason = await torchMissing();
  if (skipReason) return;
  const shards = join(work, 'shards');
  await execa(PYTHON, [
    join(EXAMPLES, 'make_shards.py'),
    shards,
    '--shards',
    String(SHARDS),
    '--per-shard',
    String(PER_SHARD),
    '--sample-bytes',
    String(SAMPLE_BYTES),
  ]);
  const port = await freePort();
  server = execa(PYTHON, ['-m', 'http.server', '--bind', '127.0.0.1', '--directory', shards, String(port)], {
    reject: false,
  });
  base = `http://127.0.0.1:${port}`;
  for (let tries = 0; tries < 50; tries++) {
    const up = await fetch(`${base}/shard-0000.tar`, { method: 'HEAD' }).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the shard server did not start on ${base}`);
});

after(() => {
  server?.kill();
  rmSync(work, { recursive: true, force: true });
});

test('tar shards over HTTP: samples per shard counted, cold and cached modes proven, the request per shard seen', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const out = join(work, 'shards.json');
  const pattern = `${base}/shard-{0000..${String(SHARDS - 1).padStart(4, '0')}}.tar`;
  const job = [
    PYTHON,
    join(EXAMPLES, 'wds_train.py'),
    pattern,
    ...NARROW,
    '--workers',
    '2',
    '--batch-size',
    '8',
    '--epochs',
    '40',
  ];
  const result = await startCli(['profile', '--remote', pattern, '--out', out, ...quick, '--', ...job], { cwd: work });
  assert.equal(result.exitCode, ExitCode.Ok, result.all);
  const profile = readProfile(out);
  assert.equal(profile.dataset.files, SHARDS);
  assert.equal(profile.dataset.remote?.kind, 'http');
  assert.equal(profile.dataset.remote?.samplesPerObject, PER_SHARD);
  for (const mode of ['synthetic', 'cached', 'cold'] as const) {
    const m = profile.modes[mode]!;
    assert.equal(m.state.proven, true, `${mode}: ${m.state.reason}`);
  }
  const cold = profile.modes.cold!;
  // One GET per shard read: far fewer requests than samples.
  const samples = cold.ranks.flatMap((r) => r.iterations).reduce((sum, it) => sum + it.samples, 0);
  assert.ok(
    cold.network!.requests > 0 && cold.network!.requests < samples / 4,
    `${cold.network!.requests} requests for ${samples} samples`,
  );
  assert.ok(profile.modes.cached!.network!.cacheHits > 0, "the cached mode was answered from the profiler's cache");
});

test('tar shards through fsspec (aiohttp): one launch, every mode proven, counted and answered in the job', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const probe = await execa(PYTHON, ['-c', 'import aiohttp, fsspec'], { reject: false });
  if (probe.exitCode !== 0) return t.skip('needs aiohttp and fsspec (apt-get install python3-aiohttp python3-fsspec)');
  const out = join(work, 'fsspec.json');
  const pattern = `${base}/shard-{0000..${String(SHARDS - 1).padStart(4, '0')}}.tar`;
  const job = [
    PYTHON,
    join(EXAMPLES, 'wds_train.py'),
    pattern,
    ...NARROW,
    '--client',
    'fsspec',
    '--workers',
    '2',
    '--epochs',
    '40',
  ];
  const result = await startCli(['profile', '--remote', pattern, '--out', out, ...quick, '--', ...job], { cwd: work });
  assert.equal(result.exitCode, ExitCode.Ok, result.all);
  assert.match(result.all, /cost: 1 launch of the job/);
  const profile = readProfile(out);
  for (const mode of ['synthetic', 'cached', 'cold'] as const) {
    const m = profile.modes[mode]!;
    assert.equal(m.state.proven, true, `${mode}: ${m.state.reason}`);
  }
  assert.ok(profile.modes.cold!.network!.requests > 0, "the cold block's requests counted in aiohttp");
  assert.ok(profile.modes.cached!.network!.cacheHits > 0, 'the cached block answered in the job from the copy');
});

test("a job with its own shard cache (WebDataset's cache_dir): cold unproven when the cache serves later epochs, proven once --job-cache keeps it empty", async (t) => {
  if (skipReason) return t.skip(skipReason);
  const pattern = `${base}/shard-{0000..${String(SHARDS - 1).padStart(4, '0')}}.tar`;
  const cacheDir = join(work, 'wds-cache');
  const job = [
    PYTHON,
    join(EXAMPLES, 'wds_train.py'),
    pattern,
    ...NARROW,
    '--workers',
    '2',
    '--batch-size',
    '8',
    '--epochs',
    '40',
    '--cache-dir',
    cacheDir,
  ];
  const args = (out: string, extra: string[]) => [
    'profile',
    '--remote',
    pattern,
    '--modes',
    'cold',
    '--out',
    out,
    ...extra,
    ...quick,
    '--',
    ...job,
  ];

  const unkept = await startCli(args(join(work, 'unkept.json'), []), { cwd: work });
  assert.equal(unkept.exitCode, ExitCode.Ok, unkept.all);
  const leaky = readProfile(join(work, 'unkept.json')).modes.cold!.state;
  assert.equal(leaky.proven, false, 'after the first epoch the job reads its shards from its own cache');
  assert.ok(leaky.readFraction! < 0.9, leaky.reason);

  const kept = await startCli(args(join(work, 'kept.json'), ['--job-cache', cacheDir]), { cwd: work });
  assert.equal(kept.exitCode, ExitCode.Ok, kept.all);
  const profile = readProfile(join(work, 'kept.json'));
  const cold = profile.modes.cold!.state;
  assert.equal(cold.proven, true, cold.reason);
  assert.ok(cold.reEvictions! > 0, 'shards the job cached during the run were swept');
  assert.equal(profile.dataset.remote?.jobCacheDir, cacheDir);
  assert.equal(profile.options.remote?.jobCache, cacheDir, 'validate names the folder again');
});

test('--job-cache refuses a folder whose deletion would reach the working folder', async () => {
  // In-process, as error paths are (the spawned CLI's are the runs above).
  const io = fakeIo(work);
  const exitCode = await run(['profile', '--remote', `${base}/shard-0000.tar`, '--job-cache', '..', '--', 'true'], io);
  assert.equal(exitCode, ExitCode.BadValue, io.out + io.err);
  assert.match(
    io.err.trim(),
    /^ds-analyzer: --job-cache \S+: its files are deleted in the cold mode, and it holds \S+: name the job's cache folder itself/,
  );
});
