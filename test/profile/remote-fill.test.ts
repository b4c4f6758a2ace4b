/**
 * The cached mode's download (fillCache) against real HTTP servers on
 * loopback: whole, it stores every object and tells its progress; the user's
 * interrupt ends it within a second with nothing half-written left; a
 * stalled object ends every other request with the endpoint's error.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type net from 'node:net';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fillCache } from '../../src/profile/data-sources/remote-fill.js';
import type { DownloadProgress } from '../../src/profile/data-sources/source-run.js';
import { EndpointError, remoteStore } from '../../src/system/network/remote-objects.js';
import type { NetDeadlines } from '../../src/system/network/deadlines.js';
import { parseRemoteSpec } from '../../src/system/network/remote-spec.js';
import { ResponseCache } from '../../src/system/network/response-cache.js';
import { SHORT, startStalling, waitFor } from '../support/misbehaving-servers.js';

const OBJECT_BYTES = 256 * 1024;

/**
 * Serves OBJECT_BYTES at any path: whole at once, or (slow) 16 KiB every 50 ms; the GETs' sockets open are counted.
 */
async function startOrigin(slow: boolean): Promise<{ port: number; open: () => number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-length': OBJECT_BYTES });
    if (req.method === 'HEAD') return void res.end();
    if (!slow) return void res.end(Buffer.alloc(OBJECT_BYTES, 3));
    sockets.add(req.socket);
    req.socket.on('close', () => sockets.delete(req.socket));
    let sent = 0;
    const timer = setInterval(() => {
      sent += 16 * 1024;
      res.write(Buffer.alloc(16 * 1024, 3));
      if (sent >= OBJECT_BYTES) clearInterval(timer), res.end();
    }, 50);
    res.on('close', () => clearInterval(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    open: () => sockets.size,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The store of `objects` objects at `origin`, listed, and a cache folder. The network's deadlines are the defaults
 * unless `deadlines` (the stall's test: SHORT), so that a busy machine does not fail the listing (0.4 s was seen to
 * at a load of 18). A listing that fails closes the origin: left open, it kept the file from ever ending.
 */
async function setUp(origin: { port: number; close: () => Promise<void> }, objects: number, deadlines?: NetDeadlines) {
  const spec = parseRemoteSpec(`http://127.0.0.1:${origin.port}/obj-{0..${objects - 1}}.bin`, undefined, {});
  const store = remoteStore(spec, deadlines);
  const dir = mkdtempSync(join(tmpdir(), 'dsa-fill-'));
  try {
    return { spec, store, listed: await store.list(), dir, cache: new ResponseCache(join(dir, 'cache')) };
  } catch (error) {
    await origin.close();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

test('a whole download stores every object and tells its start (with the estimate where a rate is known), progress and end', async () => {
  const origin = await startOrigin(false);
  const { spec, store, listed, dir, cache } = await setUp(origin, 6);
  try {
    const told: DownloadProgress[] = [];
    await fillCache(
      store,
      listed,
      cache,
      { source: spec.display, rateBytesPerSec: 1e6 },
      { onProgress: (p) => told.push(p) },
    );
    for (const o of listed) assert.equal(cache.get(o.cacheKey)?.bytes, OBJECT_BYTES);
    assert.equal(told[0].phase, 'start');
    assert.equal(told[0].bytesTotal, 6 * OBJECT_BYTES);
    assert.ok(Math.abs(told[0].estimateSec! - (6 * OBJECT_BYTES) / 1e6) < 1e-9);
    assert.equal(told[0].source, `http://127.0.0.1:${origin.port}/obj-{0..5}.bin`);
    const end = told.at(-1)!;
    assert.equal(end.phase, 'done');
    assert.equal(end.bytesDone, 6 * OBJECT_BYTES);
  } finally {
    await origin.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a download its caller announced (the cached mode copy line) tells no start of its own, only its progress and end', async () => {
  const origin = await startOrigin(false);
  const { spec, store, listed, dir, cache } = await setUp(origin, 2);
  try {
    const told: DownloadProgress[] = [];
    await fillCache(
      store,
      listed,
      cache,
      { source: spec.display, rateBytesPerSec: null },
      { onProgress: (p) => told.push(p), announced: true },
    );
    assert.ok(told.length > 0 && !told.some((p) => p.phase === 'start'), JSON.stringify(told.map((p) => p.phase)));
    assert.equal(told.at(-1)!.phase, 'done');
  } finally {
    await origin.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the user's interrupt ends a download within a second: every request destroyed, no half-written file left", async () => {
  const origin = await startOrigin(true);
  const { spec, store, listed, dir, cache } = await setUp(origin, 12);
  try {
    const interrupt = new AbortController();
    const told: DownloadProgress[] = [];
    const filling = fillCache(
      store,
      listed,
      cache,
      { source: spec.display, rateBytesPerSec: null },
      {
        signal: interrupt.signal,
        onProgress: (p) => told.push(p),
      },
    );
    await waitFor(() => origin.open() >= 8, 'eight requests in flight');
    const abortedAt = performance.now();
    interrupt.abort();
    await assert.rejects(filling, { name: 'AbortError' });
    const ms = performance.now() - abortedAt;
    assert.ok(ms < 1000, `stopped ${ms.toFixed(0)} ms after the interrupt`);
    assert.deepEqual(readdirSync(join(dir, 'cache')), [], 'nothing half-written left');
    await waitFor(() => origin.open() === 0, "every request's socket closed");
    assert.equal(told[0].phase, 'start');
    assert.equal(told[0].estimateSec, null);
    assert.ok(!told.some((p) => p.phase === 'done'));
  } finally {
    await origin.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("one object whose body stalls ends the download with the endpoint's error, and the other requests with it", async () => {
  const stalling = await startStalling(OBJECT_BYTES, 1024);
  const { store, listed, dir, cache } = await setUp(stalling, 4, SHORT);
  try {
    const started = performance.now();
    const error = await fillCache(store, listed, cache, { source: 'x', rateBytesPerSec: null }).then(
      () => assert.fail('expected a stall'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof EndpointError && error.stalled, String(error));
    assert.ok(performance.now() - started < 5000);
    assert.deepEqual(readdirSync(join(dir, 'cache')), []);
    await waitFor(() => stalling.open() === 0, 'no request left open');
  } finally {
    await stalling.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
