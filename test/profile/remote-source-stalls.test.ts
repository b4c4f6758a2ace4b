/**
 * The remote source's own reads against an endpoint whose bodies stall after
 * their headers: the count of a tar shard's samples (in the listing) and the
 * storage probe end with the endpoint's line within the deadline
 * (DSA_NET_DEADLINE_SEC), and leave no proxy or request behind.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RemoteObjectsSource } from '../../src/profile/data-sources/remote-objects.js';
import { DEADLINE_ENV } from '../../src/system/network/deadlines.js';
import { EndpointError } from '../../src/system/network/remote-objects.js';
import { parseRemoteSpec } from '../../src/system/network/remote-spec.js';
import { BOUND_MS, startStalling, waitFor } from '../support/misbehaving-servers.js';

/** A source of `pattern` on a stalling server, its deadlines 0.4 s. */
async function stallingSource(pattern: string) {
  const server = await startStalling(1 << 20, 2048);
  const dir = mkdtempSync(join(tmpdir(), 'dsa-remote-stall-'));
  const saved = process.env[DEADLINE_ENV];
  process.env[DEADLINE_ENV] = '0.4';
  const spec = parseRemoteSpec(`http://127.0.0.1:${server.port}/${pattern}`, undefined, {});
  const source = new RemoteObjectsSource(spec, { cacheDir: join(dir, 'cache'), proxyPort: 0, env: {} });
  if (saved === undefined) delete process.env[DEADLINE_ENV];
  else process.env[DEADLINE_ENV] = saved;
  return {
    server,
    source,
    dir,
    done: async () => {
      await source.close();
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

test("tar shards whose first shard stalls: the listing's sample count ends with the endpoint's line, the proxy and cache gone", async () => {
  const { server, source, dir, done } = await stallingSource('shard-{0..3}.tar');
  try {
    const started = performance.now();
    const error = await source.list().then(
      () => assert.fail('expected a stall'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof EndpointError && error.stalled, String(error));
    assert.match(error.message, /^fetching http:\/\/127\.0\.0\.1:\d+\/shard-0\.tar: the endpoint stopped answering/);
    assert.ok(performance.now() - started < BOUND_MS);
    assert.ok(!existsSync(join(dir, 'cache')), "the profiler's cache folder is removed");
    await waitFor(() => server.open() === 0, 'the stalled request is closed');
  } finally {
    await done();
  }
});

test("the storage probe against bodies that stall ends with the endpoint's line within the deadline, every request closed", async () => {
  const { server, source, done } = await stallingSource('obj-{0..31}.bin');
  try {
    const dataset = await source.list();
    const started = performance.now();
    const limits = { concurrency: 4, maxBytes: 64 << 20, maxSec: 3, requestBytes: 1 << 20 };
    const error = await source.readProber(dataset.files, limits).then(
      () => assert.fail('expected a stall'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof EndpointError && error.stalled, String(error));
    assert.match(error.message, /^fetching http:\/\/127\.0\.0\.1:\d+\/obj-\d+\.bin: the endpoint stopped answering/);
    assert.ok(performance.now() - started < BOUND_MS);
    await waitFor(() => server.open() === 0, "every probe request's socket is closed");
  } finally {
    await done();
  }
});
