import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ClientCounters,
  clientNetworkUse,
  startClientMeter,
  type ProcessCounters,
} from '../../src/profile/data-sources/client-meter.js';
import type { ResourceSample } from '../../src/schema/profile.js';

/** One counters line as python/ds_analyzer/_http.py writes it. */
function line(pid: number, fields: Partial<Record<string, unknown>>): string {
  return (
    JSON.stringify({
      pid,
      t: 0,
      requests: 0,
      bytes: 0,
      busyMs: 0,
      inFlight: 0,
      maxInFlight: 0,
      firstMs: null,
      lastEndMs: null,
      statuses: {},
      failures: 0,
      firstByteMs: [],
      requestMs: [],
      ...fields,
    }) + '\n'
  );
}

/** Each process's lines as ClientCounters gathers them: the last line's totals, every line's timings. */
function asCounters(processes: string[][]): ProcessCounters[] {
  return processes.map((lines) => {
    const parsed = lines.map((l) => JSON.parse(l));
    return {
      last: parsed.at(-1),
      firstByteMs: parsed.flatMap((l) => l.firstByteMs),
      requestMs: parsed.flatMap((l) => l.requestMs),
    };
  });
}

function netDir(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'dsa-client-meter-')), 'net');
  mkdirSync(dir);
  return dir;
}

test('the counters of every process are read as they grow, a line cut short by a write in progress waits for the next poll', () => {
  const dir = netDir();
  const counters = new ClientCounters(dir);
  assert.deepEqual(new ClientCounters(join(dir, 'missing')).poll(), [], 'no folder yet: nothing counted');
  appendFileSync(
    join(dir, 'net-10.jsonl'),
    line(10, { requests: 1, bytes: 100, firstByteMs: [3] }) + line(10, { requests: 2, bytes: 250, firstByteMs: [4] }),
  );
  // Cut where a prefix still ends in a brace: a line is whole only with its newline.
  appendFileSync(
    join(dir, 'net-11.jsonl'),
    line(11, { requests: 1, bytes: 40 }) + '{"pid":11,"t":5,"bytes":90,"statuses":{"200":1}',
  );
  appendFileSync(join(dir, 'net-12.jsonl'), 'not json}\n' + line(12, { requests: 1, bytes: 7 }));
  appendFileSync(join(dir, 'other.txt'), 'not counters\n');
  const bytes = (processes: ProcessCounters[]) => processes.map((p) => p.last.bytes).sort((a, b) => a - b);
  assert.deepEqual(bytes(counters.poll()), [7, 40, 250]);
  // The rest of the cut line arrives, and a new line: the next poll reads only what was appended.
  appendFileSync(
    join(dir, 'net-11.jsonl'),
    ',"requests":2,"busyMs":0,"inFlight":0,"maxInFlight":1,"firstMs":null,"lastEndMs":null,"failures":0,"firstByteMs":[],"requestMs":[]}\n',
  );
  appendFileSync(join(dir, 'net-10.jsonl'), line(10, { requests: 3, bytes: 300, firstByteMs: [5] }));
  const later = counters.poll();
  assert.deepEqual(bytes(later), [7, 90, 300]);
  assert.deepEqual(later.find((p) => p.last.pid === 10)!.firstByteMs, [3, 4, 5], "every line's timings, each once");
  rmSync(dir, { recursive: true, force: true });
});

test("a run's network use: totals from the last lines, timings from all, the mean in flight from the time requests were open", () => {
  const processes = asCounters([
    [
      line(1, {
        requests: 2,
        bytes: 200,
        busyMs: 100,
        maxInFlight: 1,
        firstMs: 0,
        lastEndMs: 900,
        statuses: { '200': 2 },
        firstByteMs: [5, 7],
      }),
      line(1, {
        requests: 4,
        bytes: 400,
        busyMs: 300,
        maxInFlight: 1,
        firstMs: 0,
        lastEndMs: 1900,
        statuses: { '200': 4 },
        firstByteMs: [6, 8],
        requestMs: [10, 20],
      }),
    ],
    [
      line(2, {
        requests: 3,
        bytes: 300,
        busyMs: 700,
        maxInFlight: 2,
        firstMs: 100,
        lastEndMs: 1800,
        statuses: { '200': 2, '503': 1 },
        failures: 1,
        firstByteMs: [9],
      }),
    ],
  ]);
  const use = clientNetworkUse(processes, 2);
  assert.equal(use.requests, 7);
  assert.equal(use.originBytes, 700);
  assert.deepEqual(use.statuses, { '200': 6, '503': 1 });
  assert.equal(use.failures, 1);
  assert.deepEqual(use.firstByteMs, { p50: 7, p95: 9, p99: 9, n: 5 });
  assert.equal(use.meanInFlight, 0.5, '1 s of requests open over a 2 s run');
  assert.equal(use.maxInFlight, 3, 'two processes fetching at once: 1 + 2');
  assert.equal(use.meter, 'client');
});

test('workers of successive epochs are not in flight together: the most at once is the most of those fetching at one time', () => {
  const epoch = (pid: number, from: number) => [
    line(pid, { requests: 10, maxInFlight: 1, firstMs: from, lastEndMs: from + 900 }),
  ];
  const use = clientNetworkUse(
    asCounters([epoch(1, 0), epoch(2, 0), epoch(3, 1000), epoch(4, 1000), epoch(5, 2000), epoch(6, 2000)]),
    3,
  );
  assert.equal(use.maxInFlight, 2);
});

test('the meter hands the job its folder and origins, and proves over the whole run from what the processes wrote', async () => {
  const dir = netDir();
  const meter = startClientMeter(dir, ['127.0.0.1:9000', 'b.127.0.0.1:9000']);
  assert.deepEqual(meter.jobEnv, { DSA_NET_DIR: dir, DSA_NET_ORIGINS: '127.0.0.1:9000,b.127.0.0.1:9000' });
  appendFileSync(join(dir, 'net-7.jsonl'), line(7, { requests: 3, bytes: 3000, firstMs: 1, lastEndMs: 2 }));
  const readings = await meter.finish([]);
  assert.equal(readings.ownCounter, true);
  assert.equal(readings.wholeRunBytes, 3000);
  assert.equal(readings.series.at(-1)?.bytes, 3000);
  assert.equal(readings.network?.requests, 3);
  assert.equal(readings.proofLimit, undefined);
  rmSync(dir, { recursive: true, force: true });
});

test('a run whose clients counted no request cannot be proven by them, and says which meter to use instead', async () => {
  const dir = netDir();
  const readings = await startClientMeter(dir, ['127.0.0.1:9000']).finish([]);
  assert.match(readings.proofLimit ?? '', /counted no request to the origin.*--net-meter proxy/);
  rmSync(dir, { recursive: true, force: true });
});

test("the meter's readings carry the processes' requests and failed requests, a resource sample taking the last before it", async () => {
  const dir = netDir();
  const meter = startClientMeter(dir, ['127.0.0.1:9000']);
  appendFileSync(join(dir, 'net-7.jsonl'), line(7, { requests: 40, bytes: 4000 }));
  appendFileSync(join(dir, 'net-8.jsonl'), line(8, { requests: 10, bytes: 1000, failures: 3 }));
  const t = Date.now() + 5;
  await new Promise((resolve) => setTimeout(resolve, 10));
  const readings = await meter.finish([
    { t, jobCpuSec: 0 } as ResourceSample,
    { t: Date.now() + 1000, jobCpuSec: 0 } as ResourceSample,
  ]);
  assert.deepEqual(readings.series.at(-1), { t: readings.series.at(-1)!.t, bytes: 5000, requests: 50, failures: 3 });
  rmSync(dir, { recursive: true, force: true });
});

test('with a copy to answer from, the job is told its index and the bytes answered locally are a series of their own', async () => {
  const dir = netDir();
  const meter = startClientMeter(dir, ['127.0.0.1:9000'], undefined, '/copy/index.json');
  assert.equal(meter.jobEnv?.DSA_NET_COPY, '/copy/index.json');
  appendFileSync(join(dir, 'net-7.jsonl'), line(7, { requests: 1, bytes: 100, localRequests: 4, localBytes: 4000 }));
  appendFileSync(join(dir, 'net-8.jsonl'), line(8, { localRequests: 1, localBytes: 500 }));
  // A sample after the meter's last reading (taken at finish, which a busy machine may date past now + 1 ms).
  const readings = await meter.finish([{ t: Date.now() + 1000 } as never]);
  assert.deepEqual(
    { bytes: readings.series.at(-1)?.bytes, localBytes: readings.series.at(-1)?.localBytes },
    { bytes: 100, localBytes: 4500 },
    'network bytes stay apart from those answered locally',
  );
  assert.equal(readings.proofLimit, undefined);
  rmSync(dir, { recursive: true, force: true });
});

test('a block of one launch gets the network use counted under it, whenever its lines were written or read', async () => {
  const dir = netDir();
  const meter = startClientMeter(dir, ['127.0.0.1:9000'], undefined, '/copy/index.json');
  appendFileSync(
    join(dir, 'net-7.jsonl'),
    line(7, { t: 1000, requests: 10, bytes: 1000, statuses: { 200: 10 }, firstByteMs: [5] }) +
      // The cold block's last line, written after the cached block began (at 2000): still the cold block's.
      line(7, { t: 2600, requests: 12, bytes: 1200, statuses: { 200: 12 }, firstByteMs: [6, 7], localRequests: 0 }) +
      line(7, {
        block: 1,
        t: 3000,
        requests: 12,
        bytes: 1200,
        statuses: { 200: 12 },
        localRequests: 30,
        localBytes: 3000,
      }),
  );
  // A worker forked in the cached block: its lines are that block's from its first.
  appendFileSync(join(dir, 'net-8.jsonl'), line(8, { block: 1, t: 2100, localRequests: 5, localBytes: 500 }));
  const readings = await meter.finish([]);
  const cold = readings.networkOfBlock?.(0, 500, 2000);
  assert.deepEqual([cold?.requests, cold?.originBytes, cold?.cacheHits, cold?.firstByteMs?.n], [12, 1200, 0, 3]);
  const cached = readings.networkOfBlock?.(1, 2000, 3000);
  assert.deepEqual(
    [cached?.requests, cached?.originBytes, cached?.cacheHits, cached?.cacheBytes, cached?.firstByteMs],
    [0, 0, 35, 3500, null],
    'the cached block fetched nothing and answered 35 requests locally',
  );
  assert.equal(readings.networkOfBlock?.(2, 3000, 4000).requests, 0, 'a block nothing was counted under');
  assert.match(readings.blockSource ?? '', /under the block/);
  assert.deepEqual(readings.network?.cacheHits, 35);
  rmSync(dir, { recursive: true, force: true });
});

test("an old epoch's worker whose requests under the block ended before the block's window is not in flight beside the next epoch's", async () => {
  // Seen on remote-s3's boto3 job: the switch at 3950, the block's window from 4170 (after the batches carried over).
  // Worker 1 of the old epoch fetched 3958 to 4008; the new epoch's two workers from 4064. Each held one GET at a time.
  const dir = netDir();
  const meter = startClientMeter(dir, ['127.0.0.1:9000']);
  const worker = (pid: number, firstMs: number, lastEndMs: number) =>
    appendFileSync(
      join(dir, `net-${pid}.jsonl`),
      line(pid, { block: 1, t: 3900 }) +
        line(pid, { block: 2, t: lastEndMs + 10, requests: 7, maxInFlight: 1, firstMs, lastEndMs }),
    );
  worker(1, 3958, 4008);
  worker(2, 4064, 4463);
  worker(3, 4064, 4422);
  const readings = await meter.finish([]);
  const cold = readings.networkOfBlock?.(2, 4170, 5935);
  assert.equal(cold?.requests, 21, "the old worker's requests still count under the block");
  assert.equal(cold?.maxInFlight, 2, 'two workers fetching at once, not three');
  rmSync(dir, { recursive: true, force: true });
});
