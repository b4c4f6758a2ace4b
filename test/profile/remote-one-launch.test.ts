import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RemoteObjectsSource, type NetMeter } from '../../src/profile/data-sources/remote-objects.js';
import { parseRemoteSpec } from '../../src/system/network/remote-spec.js';

/**
 * Remote data's one launch, on a real HTTP server on loopback: the source offers it where the job's hook counts and
 * answers (--net-meter client, nothing at the proxy), fetches the cached block's copy bounded by what the block reads,
 * names it in the index the hook reads, says so first, and removes it on close.
 */
const OBJECTS = 8;
const BYTES = 10_000;
let server: http.Server;
let base = '';
const work = mkdtempSync(join(tmpdir(), 'dsa-remote-one-launch-'));

before(async () => {
  server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-length': String(BYTES), etag: '"e"' });
    res.end(req.method === 'HEAD' ? undefined : Buffer.alloc(BYTES, 7));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(() => {
  server.close();
  rmSync(work, { recursive: true, force: true });
});

function source(netMeter: NetMeter, said: string[]) {
  const spec = parseRemoteSpec(`${base}/shard-{0..${OBJECTS - 1}}.bin`, undefined, {});
  const cacheDir = join(work, `copy-${netMeter}-${said.length}-${Math.random()}`);
  const remote = new RemoteObjectsSource(spec, { cacheDir, proxyPort: 0, env: {}, netMeter, say: (l) => said.push(l) });
  return { remote, cacheDir };
}

test('with the client meter every mode is a block of one launch, metered in the job, the cached one answered from a bounded copy', async () => {
  const said: string[] = [];
  const { remote, cacheDir } = source('client', said);
  try {
    const dataset = await remote.list();
    assert.equal(remote.oneLaunch?.obstacle(dataset, ['synthetic', 'cached', 'cold']), null);
    const meter = remote.startMeter('cached', dataset, [join(work, 'run')]);
    assert.equal(meter.jobEnv?.DSA_NET_COPY, join(cacheDir, 'index.json'), 'the job is told where the copy is');
    assert.equal(meter.jobEnv?.HTTP_PROXY, undefined, 'the job reaches its origin directly');
    await meter.finish([]);
    // The block reads 3.5 objects' bytes at most: the copy holds 3 of the 8 (no more than it reads), a seeded part.
    const prepared = await remote.modeState.prepare('cached', dataset, { expectedBytes: 3.5 * BYTES });
    const index = JSON.parse(readFileSync(join(cacheDir, 'index.json'), 'utf8')) as {
      objects: Record<string, { file: string; headers: Record<string, string> }>;
    };
    const entries = Object.entries(index.objects);
    assert.equal(entries.length, 3);
    assert.ok(entries.every(([key, e]) => key.startsWith('127.0.0.1:') && readFileSync(e.file).length === BYTES));
    assert.equal(prepared.residentBytesBefore, 3 * BYTES);
    assert.equal(said.length, 1);
    assert.match(
      said[0],
      /^cached mode: 29\.3 KiB from http:\/\/127\.0\.0\.1:\d+\/shard-\{0\.\.7\}\.bin \(a seeded 37\.5%/,
    );
    assert.match(said[0], /, about \d+ s left at the rate measured; removed when the profile ends$/);
    assert.equal(remote.proofLimit('cached'), null);
  } finally {
    await remote.close();
  }
  assert.ok(!existsSync(cacheDir), 'the copy is removed when the source closes');
});

test('the proxy keeps a launch a mode, and says why: --net-meter proxy, or a cap at the proxy', async () => {
  const proxied = source('proxy', []).remote;
  const capped = source('client', []).remote;
  try {
    const dataset = await proxied.list();
    assert.match(proxied.oneLaunch?.obstacle(dataset, ['cached', 'cold']) ?? '', /^--net-meter proxy/);
    const capDataset = await capped.list();
    const throttle = await capped.throttle.start(capDataset, 1e6, 'test', {});
    assert.match(capped.oneLaunch?.obstacle(capDataset, ['cached', 'cold']) ?? '', /cap or added latency/);
    const meter = capped.startMeter('cold', capDataset, [join(work, 'run')]);
    assert.ok(meter.jobEnv?.HTTP_PROXY?.startsWith('http://127.0.0.1:'), 'the job goes through the proxy');
    await meter.finish([]);
    await throttle.remove();
    assert.equal(capped.oneLaunch?.obstacle(capDataset, ['cached', 'cold']), null, 'the cap removed, one launch again');
  } finally {
    await proxied.close();
    await capped.close();
  }
});
