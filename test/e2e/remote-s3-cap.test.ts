import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readProfile } from '../../src/store/profile-store.js';
import { ExitCode } from '../../src/errors.js';
import { startCli } from './helpers.js';
import { CREDENTIALS, OBJECT_BYTES, type S3Fixture, startS3, quick } from './s3-server.js';

/**
 * The boto3 job of s3-server.ts with a metering proxy between it and the server (HTTP_PROXY) capping the origin's
 * bytes (--storage-bw): its fetch stall against the cap's time per batch, a timing, so this file runs alone
 * (scripts/test-plan.ts). The same job's behaviour uncapped: remote-s3.test.ts.
 */
let s3: S3Fixture;

before(async () => {
  s3 = await startS3('dsa-e2e-s3-cap-');
});

after(() => s3.close());

test('capped at the proxy (--storage-bw), the same job turns fetch-bound and the tool says so', async (t) => {
  if (s3.skipReason) return t.skip(s3.skipReason);
  const out = join(s3.work, 'capped.json');
  // 8 objects of 256 KiB a batch at 8 MB/s: about 260 ms of fetch per iteration, against a step of tens of ms.
  const result = await startCli(
    [
      'profile',
      '--remote',
      's3://data/train/',
      '--endpoint',
      s3.endpoint,
      '--storage-bw',
      '8MB/s',
      '--out',
      out,
      ...quick,
      '--',
      ...s3.job(),
    ],
    {
      cwd: s3.work,
      env: CREDENTIALS,
    },
  );
  assert.equal(result.exitCode, ExitCode.Ok, result.all);
  const profile = readProfile(out);
  assert.equal(profile.modes.cold?.state.proven, true, profile.modes.cold?.state.reason);
  assert.equal(profile.analysis?.verdict.bound, 'fetch', profile.analysis?.verdict.text);
  const fetchStallMs = profile.analysis!.fetchStallMs!.mean;
  const coldMs = profile.modes.cold!.summary!.iterMs.mean;
  const capMs = ((8 * OBJECT_BYTES) / 8e6) * 1000;
  t.diagnostic(
    `cold iteration ${coldMs.toFixed(0)} ms, fetch stall ${fetchStallMs.toFixed(0)} ms; the cap alone takes ${capMs.toFixed(0)} ms per batch`,
  );
  // The cap sets the cold pace: a batch's bytes at 8 MB/s, the step overlapped with them. The stall is that pace less the
  // cached one: below the cap's time, and most of it (the step's share moves with the machine's load).
  assert.ok(Math.abs(coldMs - capMs) <= 0.15 * capMs, `cold iteration ${coldMs} ms vs ${capMs} ms of capped transfer`);
  assert.ok(
    fetchStallMs < capMs * 1.1 && fetchStallMs > capMs * 0.5,
    `fetch stall ${fetchStallMs} ms vs ${capMs} ms of capped transfer per batch`,
  );
  assert.match(result.stdout, /cold network throttled to 8\.0 MB\/s/);
  assert.match(result.stdout, /remote: s3:\/\/data\/train\/ at http:\/\/127\.0\.0\.1:\d+/);
});
