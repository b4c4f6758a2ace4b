import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import S3rver from 's3rver';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { readProfile } from '../../src/store/profile-store.js';
import { ExitCode } from '../../src/errors.js';
import { PYTHON, startCli, torchMissing } from './helpers.js';

/**
 * Remote data, end to end: an S3-compatible server (s3rver) on loopback, and
 * an unmodified-looking PyTorch script (examples/remote/s3_map_train.py) whose
 * map-style dataset GETs one object per sample with boto3. The profiler lists
 * the bucket; by default the job reaches the server directly in one launch,
 * its hook counting its requests and answering the cached block from the
 * profiler's copy; with --storage-bw a metering proxy between the job and
 * the server (HTTP_PROXY) caps the origin's bytes.
 */
const SCRIPT = fileURLToPath(new URL('../../../examples/remote/s3_map_train.py', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'dsa-e2e-s3-'));
const OBJECTS = 120;
const OBJECT_BYTES = 256 * 1024;
/**
 * Objects of slightly mixed sizes, as real ones are: the network probe's bytes per request is then a mean, not a size.
 */
const objectBytes = (k: number) => OBJECT_BYTES + (k % 7);
const TOTAL_BYTES = Array.from({ length: OBJECTS }, (_, k) => objectBytes(k)).reduce((a, b) => a + b, 0);
const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_DEFAULT_REGION: 'us-east-1' };
const quick = ['--single-pass', '--precision', '10%', '--min-iterations', '20', '--max-iterations', '80'];

let skipReason: string | null = null;
let server: S3rver | null = null;
let endpoint = '';

before(async () => {
  skipReason = (await torchMissing()) ?? (await boto3Missing());
  if (skipReason) return;
  server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory: join(work, 's3'),
    configureBuckets: [{ name: 'data', configs: [] }],
  });
  const address = (await server.run()) as AddressInfo;
  endpoint = `http://127.0.0.1:${address.port}`;
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const client = new S3Client({
    endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  for (let k = 0; k < OBJECTS; k++) {
    await client.send(
      new PutObjectCommand({
        Bucket: 'data',
        Key: `train/${String(k).padStart(4, '0')}.bin`,
        Body: randomBytes(objectBytes(k)),
      }),
    );
  }
  client.destroy();
});

after(async () => {
  await server?.close();
  rmSync(work, { recursive: true, force: true });
});

async function boto3Missing(): Promise<string | null> {
  const { execa } = await import('execa');
  const result = await execa(PYTHON, ['-c', 'import boto3'], { reject: false });
  return result.exitCode === 0 ? null : `boto3 is not installed for ${PYTHON} (apt-get install python3-boto3)`;
}

function job(): string[] {
  return [
    PYTHON,
    SCRIPT,
    '--endpoint',
    endpoint,
    '--bucket',
    'data',
    '--prefix',
    'train/',
    '--workers',
    '2',
    '--batch-size',
    '8',
    '--epochs',
    '50',
  ];
}

test("a boto3 job against an S3 server on loopback, in one launch: cold and cached modes proven from its clients' counts, and its network use recorded", async (t) => {
  if (skipReason) return t.skip(skipReason);
  const out = join(work, 'uncapped.json');
  const result = await startCli(
    ['profile', '--remote', 's3://data/train/', '--endpoint', endpoint, '--out', out, ...quick, '--', ...job()],
    { cwd: work, env: CREDENTIALS },
  );
  assert.equal(result.exitCode, ExitCode.Ok, result.all);
  const profile = readProfile(out);
  assert.equal(profile.dataset.files, OBJECTS);
  assert.equal(profile.dataset.bytes, TOTAL_BYTES);
  assert.equal(profile.dataset.remote?.kind, 's3');
  assert.equal(profile.cost?.launches, 1, profile.cost?.scheduleReason);
  assert.match(profile.dataset.remote?.location ?? '', /^s3:\/\/data\/train\/ at http:\/\/127\.0\.0\.1:\d+$/);
  for (const mode of ['synthetic', 'cached', 'cold'] as const) {
    const m = profile.modes[mode]!;
    assert.equal(m.status, 'ok', `${mode}: ${m.stopReason}`);
    assert.equal(m.state.proven, true, `${mode}: ${m.state.reason}`);
  }
  const cold = profile.modes.cold!;
  const cached = profile.modes.cached!;
  assert.match(cold.state.reason, /fetched over the network/);
  assert.ok(cold.state.readFraction! >= 0.9, `cold: ${cold.state.reason}`);
  assert.ok(cold.network && cold.network.requests >= 20 * 8, `cold: one GET per sample (${cold.network?.requests})`);
  assert.ok(
    cold.network.firstByteMs && cold.network.firstByteMs.n === cold.network.requests,
    'every request to the origin is timed',
  );
  assert.ok(
    cold.network.maxInFlight >= 1 && cold.network.maxInFlight <= 2,
    `two workers, one GET each at a time (max ${cold.network.maxInFlight})`,
  );
  assert.ok(
    cached.network && cached.network.cacheHits >= 20 * 8,
    "the cached mode was answered from the profiler's copy",
  );
  assert.ok(cached.network.originBytes < 0.05 * cached.network.cacheBytes, 'and the origin served (nearly) nothing');
  // The resource samples hold the proxy's counter, so validate and the report read the same bytes.
  assert.ok(cold.resources.some((s) => (s.fetchedBytes ?? 0) > 0));
  // The network probe ran on objects of mixed sizes (a GPU run once failed here writing a fractional request size).
  assert.ok(
    profile.storageProbe && Number.isInteger(profile.storageProbe.requestBytes),
    JSON.stringify(profile.storageProbe),
  );
  // The profiler's object cache is gone with the profile run; the modes' logs stay.
  assert.ok(!readdirSync(join(work, 'uncapped.d')).includes('remote-cache'), 'object cache removed');
});

test('capped at the proxy (--storage-bw), the same job turns fetch-bound and the tool says so', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const out = join(work, 'capped.json');
  // 8 objects of 256 KiB a batch at 4 MB/s: about 520 ms of fetch per iteration, against a step of tens of ms.
  const result = await startCli(
    [
      'profile',
      '--remote',
      's3://data/train/',
      '--endpoint',
      endpoint,
      '--storage-bw',
      '4MB/s',
      '--out',
      out,
      ...quick,
      '--',
      ...job(),
    ],
    {
      cwd: work,
      env: CREDENTIALS,
    },
  );
  assert.equal(result.exitCode, ExitCode.Ok, result.all);
  const profile = readProfile(out);
  assert.equal(profile.modes.cold?.state.proven, true, profile.modes.cold?.state.reason);
  assert.equal(profile.analysis?.verdict.bound, 'fetch', profile.analysis?.verdict.text);
  const fetchStallMs = profile.analysis!.fetchStallMs!.mean;
  const capMs = ((8 * OBJECT_BYTES) / 4e6) * 1000;
  t.diagnostic(`fetch stall ${fetchStallMs.toFixed(0)} ms; the cap alone takes ${capMs.toFixed(0)} ms per batch`);
  // The stall is the cap's time per batch less what the loader overlaps with the step: below the cap's time, and most
  // of it.
  assert.ok(
    fetchStallMs < capMs * 1.1 && fetchStallMs > capMs * 0.6,
    `fetch stall ${fetchStallMs} ms vs ${capMs} ms of capped transfer per batch`,
  );
  assert.match(result.stdout, /cold network throttled to 4\.0 MB\/s/);
  assert.match(result.stdout, /remote: s3:\/\/data\/train\/ at http:\/\/127\.0\.0\.1:\d+/);
});

test('an endpoint that does not answer is one line naming the cause and the fix, and credentials in a URL are never printed or saved', async (t) => {
  const out = join(work, 'refused.json');
  const result = await startCli(
    [
      'profile',
      '--remote',
      'http://alice:s3cr3t@127.0.0.1:9/shard-{00..03}.tar?token=t0k3n',
      '--out',
      out,
      '--',
      'true',
    ],
    { cwd: work },
  );
  assert.equal(result.exitCode, ExitCode.Environment, result.all);
  assert.match(
    result.stderr.trim(),
    /^ds-analyzer: listing http:\/\/127\.0\.0\.1:9\/shard-00\.tar: the endpoint does not answer \(ECONNREFUSED\): start the server or fix the endpoint$/,
  );
  assert.doesNotMatch(result.all, /s3cr3t|t0k3n|alice/);
  assert.doesNotMatch(result.all, /^\s+at .+:\d+:\d+\)?$/m, 'no stack trace');
  void t;
  assert.throws(() => readFileSync(out), 'no profile for a run that never started');
});

test('wrong credentials, a missing bucket and a proxy port already taken: one line each, naming the cause and the fix; no profile, nothing left listening', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const denied = await startCli(
    [
      'profile',
      '--remote',
      's3://data/train/',
      '--endpoint',
      endpoint,
      '--out',
      join(work, 'denied.json'),
      '--',
      'true',
    ],
    {
      cwd: work,
      env: { ...CREDENTIALS, AWS_ACCESS_KEY_ID: 'NOT-A-KEY', AWS_SECRET_ACCESS_KEY: 'not-a-secret' },
    },
  );
  assert.equal(denied.exitCode, ExitCode.Environment, denied.all);
  assert.match(
    denied.stderr.trim(),
    /^ds-analyzer: listing s3:\/\/data\/train\/ at http:\/\/127\.0\.0\.1:\d+: access denied \(\w+\): give the credentials the job uses/,
  );
  assert.doesNotMatch(denied.all, /not-a-secret/);
  const missing = await startCli(
    [
      'profile',
      '--remote',
      's3://no-such-bucket/train/',
      '--endpoint',
      endpoint,
      '--out',
      join(work, 'missing.json'),
      '--',
      'true',
    ],
    { cwd: work, env: CREDENTIALS },
  );
  assert.equal(missing.exitCode, ExitCode.MissingInput, missing.all);
  assert.match(
    missing.stderr.trim(),
    /^ds-analyzer: listing s3:\/\/no-such-bucket\/train\/ at http:\/\/127\.0\.0\.1:\d+: not found \(NoSuchBucket\): check the bucket, prefix or URL$/,
  );
  assert.ok(!readdirSync(work).includes('missing.json'), 'no profile for a bucket that does not exist');
  const taken = http.createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const port = (taken.address() as AddressInfo).port;
  try {
    const result = await startCli(
      [
        'profile',
        '--remote',
        's3://data/train/',
        '--endpoint',
        endpoint,
        '--proxy-port',
        String(port),
        '--out',
        join(work, 'taken.json'),
        '--',
        'true',
      ],
      { cwd: work, env: CREDENTIALS },
    );
    assert.equal(result.exitCode, ExitCode.Environment, result.all);
    assert.equal(
      result.stderr.trim(),
      `ds-analyzer: --proxy-port ${port} is already taken on 127.0.0.1: pick another port, or omit --proxy-port to use any free one`,
    );
    assert.ok(!readdirSync(work).includes('taken.json'), 'no profile for a run that never started');
    assert.ok(
      !readdirSync(join(work, 'taken.d'), { withFileTypes: true }).some((e) => e.name === 'remote-cache'),
      "the profiler's object cache is removed",
    );
  } finally {
    taken.close();
  }
});

test("validate --latency: the cold mode with every request held at the proxy runs as slow as the wait allows, beside the what-if's prediction", async (t) => {
  if (skipReason) return t.skip(skipReason);
  const profile = join(work, 'uncapped.json');
  const result = await startCli(['validate', profile, '--latency', '50ms', '--json', '--max-iterations', '60'], {
    cwd: work,
    env: CREDENTIALS,
  });
  assert.equal(result.exitCode, ExitCode.Ok, result.all);
  const report = JSON.parse(result.stdout) as {
    results: Array<{
      point: { kind: string; latencySec?: number };
      measuredSamplesPerSec: number | null;
      predictedSamplesPerSec: number;
      settingHeld?: boolean | null;
      note: string;
    }>;
  };
  const point = report.results.find((r) => r.point.kind === 'latency')!;
  assert.equal(point.point.latencySec, 0.05);
  assert.match(point.note, /^cold, every request delayed [\d.]+ ms to a first byte in 50 ms \(ok/);
  // Two workers, one GET each at a time, each waiting at least 50 ms: at most 2 / 0.05 = 40 samples a second.
  assert.ok(
    point.measuredSamplesPerSec! > 0 && point.measuredSamplesPerSec! <= 40,
    `${point.measuredSamplesPerSec} samples/s`,
  );
  assert.ok(point.predictedSamplesPerSec <= 40, `predicted ${point.predictedSamplesPerSec} samples/s`);
  t.diagnostic(
    `latency 50 ms: predicted ${point.predictedSamplesPerSec.toFixed(1)}, measured ${point.measuredSamplesPerSec!.toFixed(1)} samples/s`,
  );
});
