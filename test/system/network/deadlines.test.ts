/**
 * The deadlines of the profiler's own network waits, against real servers on
 * loopback that misbehave as a stopped or cut-off endpoint does: one that
 * accepts connections and never answers, one that sends its headers and then
 * stalls the body. No mock of the network: every request is a real socket.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { ExitCode } from '../../../src/errors.js';
import { MeteringProxy } from '../../../src/system/network/metering-proxy.js';
import { DEADLINE_ENV, netDeadlines } from '../../../src/system/network/deadlines.js';
import { EndpointError, remoteStore } from '../../../src/system/network/remote-objects.js';
import { parseRemoteSpec } from '../../../src/system/network/remote-spec.js';
import {
  BOUND_MS,
  SHORT,
  startKeptAliveBreaker,
  startSilent,
  startStalling,
  waitFor,
} from '../../support/misbehaving-servers.js';

/** Rejection of `promise`, with the ms it took; fails when it resolves. */
async function rejection(promise: Promise<unknown>): Promise<{ error: Error; ms: number }> {
  const started = performance.now();
  try {
    await promise;
  } catch (error) {
    return { error: error as Error, ms: performance.now() - started };
  }
  assert.fail('expected a rejection');
}

/** Reads a stream to its end. */
async function drain(body: NodeJS.ReadableStream): Promise<void> {
  for await (const _ of body);
}

test('DSA_NET_DEADLINE_SEC sets both deadlines; the defaults are 30 s; a bad value keeps them', () => {
  assert.deepEqual(netDeadlines({}), { answerMs: 30_000, idleMs: 30_000 });
  assert.deepEqual(netDeadlines({ [DEADLINE_ENV]: '2.5' }), { answerMs: 2500, idleMs: 2500 });
  assert.deepEqual(netDeadlines({ [DEADLINE_ENV]: 'soon' }), { answerMs: 30_000, idleMs: 30_000 });
});

test('HTTP listing of an endpoint that accepts and never answers: one line naming it, without credentials, exit Environment, within the deadline', async () => {
  const silent = await startSilent();
  try {
    const spec = parseRemoteSpec(
      `http://alice:s3cr3t@127.0.0.1:${silent.port}/shard-{0..3}.tar?token=t0k3n`,
      undefined,
      {},
    );
    const { error, ms } = await rejection(remoteStore(spec, SHORT).list());
    assert.ok(error instanceof EndpointError, String(error));
    assert.equal(error.exitCode, ExitCode.Environment);
    assert.equal(error.stalled, true);
    assert.match(
      error.message,
      new RegExp(`^listing http://127\\.0\\.0\\.1:${silent.port}/shard-\\d\\.tar: the endpoint stopped answering`),
    );
    assert.doesNotMatch(error.message, /alice|s3cr3t|t0k3n|\n/);
    assert.ok(ms < BOUND_MS, `${ms} ms`);
  } finally {
    await silent.close();
  }
});

test('HTTP fetch whose body stalls after its headers: the body fails naming the endpoint within the idle deadline, and its socket is closed', async () => {
  const stalling = await startStalling(1 << 20, 64 * 1024);
  try {
    const spec = parseRemoteSpec(`http://127.0.0.1:${stalling.port}/obj-{0..1}.bin`, undefined, {});
    const store = remoteStore(spec, SHORT);
    const [object] = await store.list();
    assert.equal(object.bytes, 1 << 20);
    let seen = 0;
    const { body } = await store.fetch(object, { onBytes: (n) => (seen += n) });
    const { error, ms } = await rejection(drain(body));
    assert.ok(error instanceof EndpointError && error.stalled, String(error));
    assert.match(
      error.message,
      /^fetching http:\/\/127\.0\.0\.1:\d+\/obj-0\.bin: the endpoint stopped answering \(nothing for 0\.4 s\)/,
    );
    assert.ok(ms < BOUND_MS, `${ms} ms`);
    assert.equal(seen, 64 * 1024, 'the bytes that came were counted');
    await waitFor(() => stalling.open() === 0, 'the stalled GET socket is closed');
  } finally {
    await stalling.close();
  }
});

test('S3 listing against an endpoint that swallows every byte: the SDK attempts end within the deadline, one line naming the endpoint', async () => {
  const silent = await startSilent();
  const env = { AWS_ACCESS_KEY_ID: 'K', AWS_SECRET_ACCESS_KEY: 'S', AWS_REGION: 'us-east-1' };
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    const spec = parseRemoteSpec('s3://data/train/', `http://127.0.0.1:${silent.port}`, env);
    const store = remoteStore(spec, SHORT);
    const { error, ms } = await rejection(store.list());
    store.close();
    assert.ok(error instanceof EndpointError && error.stalled, String(error));
    assert.equal(error.exitCode, ExitCode.Environment);
    assert.match(
      error.message,
      new RegExp(`^listing s3://data/train/ at http://127\\.0\\.0\\.1:${silent.port}: the endpoint stopped`),
    );
    assert.ok(ms < BOUND_MS, `${ms} ms`);
    const fetched = await rejection(
      remoteStore(spec, SHORT).fetch({ path: 'data/train/0.bin', bytes: 1, cacheKey: 'k' }),
    );
    assert.ok(fetched.error instanceof EndpointError && fetched.error.stalled, String(fetched.error));
    assert.match(fetched.error.message, /^fetching s3:\/\/data\/train\/ at http:\/\/127\.0\.0\.1:\d+: the endpoint/);
  } finally {
    process.env = saved;
    await silent.close();
  }
});

test("a caller's abort ends a fetch in flight at once, with the abort's reason, not the endpoint's", async () => {
  const silent = await startSilent();
  try {
    const spec = parseRemoteSpec(`http://127.0.0.1:${silent.port}/a.bin`, undefined, {});
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const { error, ms } = await rejection(
      remoteStore(spec, { answerMs: 60_000, idleMs: 60_000 }).fetch(
        { path: 'a.bin', bytes: 1, cacheKey: `127.0.0.1:${silent.port}/a.bin` },
        { signal: controller.signal },
      ),
    );
    assert.equal(error.name, 'AbortError', String(error));
    assert.ok(ms < 1000, `${ms} ms`);
    await waitFor(() => silent.open() === 0, 'the request socket is destroyed');
  } finally {
    await silent.close();
  }
});

test('the metering proxy answers 504 for an origin that never answers, and cuts a body that stalls; the failures are counted', async () => {
  const silent = await startSilent();
  const stalling = await startStalling(1 << 20, 4096);
  const origins = [`127.0.0.1:${silent.port}`, `127.0.0.1:${stalling.port}`];
  const proxy = await MeteringProxy.start({
    port: 0,
    dataOrigins: origins,
    bytesPerSec: null,
    cache: null,
    cacheUse: 'pass',
    deadlines: SHORT,
  });
  try {
    const started = performance.now();
    const unanswered = await getThrough(proxy.url, `http://${origins[0]}/a.bin`);
    assert.equal(unanswered.status, 504);
    assert.ok(performance.now() - started < BOUND_MS);
    const cut = await getThrough(proxy.url, `http://${origins[1]}/b.bin`);
    assert.equal(cut.status, 200);
    assert.equal(cut.error, true, 'the stalled body ends as a cut connection, not as a whole response');
    assert.equal(cut.bytes, 4096);
    const counters = proxy.readCounters();
    assert.equal(counters.failures, 2);
    assert.match(counters.lastFailure ?? '', /no byte of the body within/);
    await waitFor(() => silent.open() === 0 && stalling.open() === 0, "the origins' sockets are closed");
  } finally {
    await proxy.close();
    await silent.close();
    await stalling.close();
  }
});

/** GET `url` through the proxy (absolute form): its status, the body's bytes, and whether the response was cut. */
function getThrough(proxyUrl: string, url: string): Promise<{ status: number; bytes: number; error: boolean }> {
  const proxy = new URL(proxyUrl);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: proxy.hostname, port: proxy.port, path: url }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, error: false }));
      res.on('error', () => resolve({ status: res.statusCode ?? 0, bytes, error: true }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('a body its reader holds back longer than the idle deadline is not a stall: it is read whole afterwards', async () => {
  const whole = await startStalling(1 << 20, 1 << 20);
  try {
    const spec = parseRemoteSpec(`http://127.0.0.1:${whole.port}/big.bin`, undefined, {});
    const store = remoteStore(spec, SHORT);
    const [object] = await store.list();
    const { body } = await store.fetch(object);
    await new Promise((resolve) => setTimeout(resolve, 3 * SHORT.idleMs));
    let bytes = 0;
    for await (const chunk of body) bytes += (chunk as Buffer).length;
    assert.equal(bytes, 1 << 20);
  } finally {
    await whole.close();
  }
});

test('a kept-alive connection the server closes as the next request arrives: the request is sent again on a new one, not failed as reset', async () => {
  // Each connection is dropped at its second request, as a server's keep-alive timeout racing the next request does
  // (seen in CI as "the endpoint does not answer (ECONNRESET)").
  const server = await startKeptAliveBreaker((req) => req.socket.destroy());
  try {
    const spec = parseRemoteSpec(`http://127.0.0.1:${server.port}/obj-{0..1}.bin`, undefined, {});
    const store = remoteStore(spec, SHORT);
    const objects = await store.list();
    for (const object of [...objects, ...objects]) {
      const { body } = await store.fetch(object);
      let text = '';
      for await (const chunk of body) text += chunk;
      assert.equal(text, 'abc');
    }
  } finally {
    await server.close();
  }
});

test('a kept-alive connection reset mid-answer: the body fails, and the request is not sent again', async () => {
  // A connection's second request gets headers and 10 of 1,000 bytes, then a reset.
  const server = await startKeptAliveBreaker((req, res) => {
    res.writeHead(200, { 'content-length': 1000 });
    res.write(Buffer.alloc(10), () => req.socket.destroy());
  });
  try {
    const spec = parseRemoteSpec(`http://127.0.0.1:${server.port}/obj-{0..1}.bin`, undefined, {});
    const store = remoteStore(spec, SHORT);
    const [object] = await store.list();
    await rejection(store.fetch(object).then(({ body }) => drain(body)));
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(server.gets(), 1, 'one GET: a reset after the answer began is not a reason to ask again');
  } finally {
    await server.close();
  }
});
