// The what-if on remote data, against jobs run without the tool on this
// machine (2026-11-25): a boto3 map-style job (examples/remote/s3_map_train.py,
// 2 workers, batch 8, 256 KiB objects) behind a loopback "network".
//   remote-latency.json: 40 ms added to every request, no cap, one request
//     per worker. Alone: 226 ms per iteration at 1 thread per worker, 117 at
//     2, 68 at 4.
//   remote-capped.json: a 4 MB/s cap, no added latency. Alone: 526 ms per
//     iteration at 4 MB/s, 264 at 8 MB/s.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { Profile } from '../../src/schema/profile.js';
import { baseScenario, predict, requestWaitSec } from '../../src/whatif/model.js';
import { fetchStalls, recommend } from '../../src/whatif/recommend.js';
import { probeBandwidth } from '../../src/whatif/fit/storage.js';
import { fitOrFail } from './fit-or-fail.js';

const load = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../../test/fixtures/profiles/${name}`, import.meta.url), 'utf8')) as Profile;
const within = (predicted: number, truth: number, share: number) =>
  assert.ok(Math.abs(predicted - truth) / truth <= share, `predicted ${predicted.toFixed(1)} ms, measured ${truth} ms`);

test('requests in flight: latency-paced fetches shrink with the threads per worker, as the job did', () => {
  const profile = load('remote-latency.json');
  const model = fitOrFail(profile);
  assert.ok(Math.abs(model.requestLatencySec - 0.045) < 0.005, `L ${model.requestLatencySec}`);
  assert.equal(model.profiledInFlightPerWorker, 1);
  assert.equal(model.requestsPerSample, 1);
  // The cold mode's rate is what one request per worker got: the network probe, many at once, says what it carries.
  assert.ok(
    model.storageBytesPerSec > 3 * profile.modes.cold!.storageReadBytesPerSec!,
    `B ${model.storageBytesPerSec} is the probe's, not the cold mode's read rate`,
  );
  assert.match(model.parameters.find((p) => p.symbol === 'B_storage')!.source, /^storageProbe/);
  const at = (q: number) => predict(model, { ...baseScenario(model), cacheBytes: 0, inFlightPerWorker: q }).iterMs;
  within(at(1), 226, 0.15);
  within(at(2), 117, 0.15);
  within(at(4), 68, 0.15);
});

test('bandwidth: a saturated network hides latency, so L is assumed 0 and the bandwidth term carries the fetch', () => {
  const model = fitOrFail(load('remote-capped.json'));
  assert.equal(model.requestLatencySec, 0);
  const latency = model.parameters.find((p) => p.symbol === 'L')!;
  assert.match(latency.source, /^assumed 0: the cold mode read 4\.0 MB\/s of the 4\.0 MB\/s/);
  const at = (bytesPerSec: number) =>
    predict(model, { ...baseScenario(model), cacheBytes: 0, storageBytesPerSec: bytesPerSec }).iterMs;
  within(at(4e6), 526, 0.15);
  within(at(8e6), 264, 0.15);
});

test('local files have no request term: their predictions do not change', () => {
  const model = fitOrFail(load('emulated-quick.json'));
  assert.equal(model.requestLatencySec, 0);
  assert.ok(!model.parameters.some((p) => p.symbol === 'L' || p.symbol === 'q'));
  const base = baseScenario(model);
  assert.equal(predict(model, { ...base, inFlightPerWorker: 8 }).iterMs, predict(model, base).iterMs);
});

test('object size: shards of many samples need fewer requests per sample, so the latency term shrinks with them; the smallest shard that removes the stall is named', () => {
  const model = fitOrFail(load('remote-latency.json'));
  const objectBytes = model.bytesPerSample / model.requestsPerSample;
  const scenario = { ...baseScenario(model), cacheBytes: 0 };
  const at = (bytes: number | null) => predict(model, { ...scenario, objectBytes: bytes });
  assert.equal(at(null).iterMs, at(objectBytes).iterMs, 'objects as profiled predict the profile');
  // Four samples a request: a quarter of the latency term, the bandwidth term unchanged.
  const wait = (bytes: number) => requestWaitSec(model, { ...scenario, objectBytes: bytes });
  assert.ok(Math.abs(wait(4 * objectBytes) - wait(objectBytes) / 4) < 1e-12);
  assert.ok(at(4 * objectBytes).iterMs < at(objectBytes).iterMs);
  const shards = recommend(model, scenario).find((r) => r.kind === 'objects')!;
  assert.ok(shards.value !== null && shards.value > objectBytes, shards.text);
  assert.ok(!fetchStalls(shards.prediction!), shards.text);
  assert.match(shards.text, /^object size: shards of \S+ \S+ \(objects of 256\.0 KiB now\) remove the fetch stall/);
  // Half that size still stalls (a fetch stall shows, though the prep stall beside it is larger and named):
  // the value is the smallest on the doubling grid.
  assert.ok(fetchStalls(at(shards.value! / 2)));
});

test("the network probe's rate less its requests' waits for a first byte is the bandwidth; a probe the waits explain bounds it from below", () => {
  const probe = {
    bytesPerSec: 20e6,
    bytesRead: 50e6,
    storageBytes: 50e6,
    files: 384,
    sec: 2.5,
    concurrency: 16,
    requestBytes: 140e3,
    proven: true,
    reason: '',
  };
  assert.deepEqual(
    probeBandwidth(probe),
    { bytesPerSec: 20e6, latencyShare: 0, lowerBound: false },
    'files: no waits, the rate is the bandwidth',
  );
  // 16 requests of 140 kB, each waiting 45.9 ms: the waits take 41% of the probe's time (seen on a 40 ms loopback
  // "network").
  const remote = probeBandwidth({ ...probe, firstByteMs: 45.9 });
  assert.ok(Math.abs(remote.latencyShare - 0.41) < 0.01, `${remote.latencyShare}`);
  assert.ok(Math.abs(remote.bytesPerSec - 20e6 / (1 - remote.latencyShare)) < 1, `${remote.bytesPerSec}`);
  assert.equal(remote.lowerBound, false);
  assert.equal(
    probeBandwidth({ ...probe, firstByteMs: 120 }).lowerBound,
    true,
    'waits that explain the whole probe leave only a bound',
  );
});

test('remote data as profiled has no cache of its own, and cache advice names a local LRU cache of whole objects with the line to paste', () => {
  const model = fitOrFail(load('remote-latency.json'));
  assert.equal(
    model.defaultCacheBytes,
    0,
    "a boto3 job keeps no copy: the profiler's cache in the cached mode is not the job's",
  );
  assert.match(model.parameters.find((p) => p.symbol === 'M0')!.source, /^none: the job fetches every sample/);
  const lru = recommend(model, baseScenario(model)).find((r) => r.kind === 'cache' && r.cachePolicy === 'page-cache')!;
  assert.match(
    lru.text,
    /^local cache of whole objects, LRU \(Streaming's cache_limit, LitData's max_cache_size\): a cache of /,
  );
  assert.match(lru.text, /Paste: StreamingDataset\(\.\.\., cache_limit='\d+mb'\)/);
});

test('the first batch: as measured at the profiled settings, and its fetch scaled by the bandwidth and the latency asked', () => {
  const profile = load('remote-latency.json');
  assert.equal(fitOrFail(profile).firstBatch, null, 'a profile without firstBatch: nothing to predict');
  assert.equal(predict(fitOrFail(profile), baseScenario(fitOrFail(profile))).firstBatchSec, undefined);
  profile.modes.cached!.firstBatch = { sec: 3.0, startupSec: 2.9, firstWaitSec: 0.1 };
  profile.modes.cold!.firstBatch = { sec: 3.4, startupSec: 2.95, firstWaitSec: 0.45 };
  const model = fitOrFail(profile);
  assert.deepEqual(
    model.parameters.filter((p) => ['T0', 'W1', 'W1c'].includes(p.symbol)).map((p) => p.value),
    [2.95, 0.1, 0.45],
  );
  const base = baseScenario(model);
  const asProfiled = predict(model, base).firstBatchSec!;
  assert.ok(Math.abs(asProfiled - 3.4) < 1e-9, `as profiled it is what was measured: ${asProfiled}`);
  // Each worker's 8 requests for its first batch wait L, one at a time (the workers side by side): 0.1 s more adds 0.8
  // s.
  const farther = predict(model, { ...base, requestLatencySec: model.requestLatencySec + 0.1 }).firstBatchSec!;
  assert.ok(Math.abs(farther - asProfiled - 0.8) < 1e-6, `${farther} vs ${asProfiled}`);
  // Half the bandwidth: the first batches' bytes take twice as long.
  const slower = predict(model, { ...base, storageBytesPerSec: base.storageBytesPerSec / 2 }).firstBatchSec!;
  assert.ok(slower > asProfiled, `${slower} > ${asProfiled}`);
});

test("a saturated link: the probe's first bytes under load are queueing, so the bandwidth is its rate less the wait of requests sent one at a time, and advice names bandwidth, not requests in flight", () => {
  // remote-capped.json's job (4 MB/s cap; alone 526 ms at 4 MB/s, 264 at 8 MB/s), with the probe as it now runs:
  // 16 requests of 256 KiB at once over the capped link wait 450 ms each (median) for a first byte behind the others'
  // bytes;
  // the three sent one at a time before them waited 2 ms.
  const profile = load('remote-capped.json');
  const probe = { ...profile.storageProbe!, concurrency: 16, bytesPerSec: 4.0e6, firstByteMs: 450, idleFirstByteMs: 2 };
  const loaded = probeBandwidth({ ...probe, idleFirstByteMs: undefined });
  assert.ok(
    loaded.bytesPerSec > 1.4 * 4.0e6,
    `the loaded wait taken for latency inflates the link: ${loaded.bytesPerSec}`,
  );
  const idle = probeBandwidth(probe);
  assert.ok(Math.abs(idle.bytesPerSec - 4.0e6) / 4.0e6 < 0.01, `the idle wait leaves the rate: ${idle.bytesPerSec}`);
  profile.storageProbe = probe;
  // The cold mode's requests, too, waited behind each other: its median first byte is queueing, not latency.
  profile.modes.cold!.network!.firstByteMs!.p50 = 400;
  const model = fitOrFail(profile);
  assert.equal(model.requestLatencySec, 0.002);
  assert.match(
    model.parameters.find((p) => p.symbol === 'L')!.source,
    /^storageProbe\.idleFirstByteMs: requests sent one at a time/,
  );
  const scenario = { ...baseScenario(model), cacheBytes: 0 };
  const at = (s: Partial<typeof scenario>) => predict(model, { ...scenario, ...s }).iterMs;
  within(at({ storageBytesPerSec: 4e6 }), 526, 0.15);
  within(at({ storageBytesPerSec: 8e6 }), 264, 0.15);
  // The pace does not follow the requests in flight on a full link.
  const one = at({ inFlightPerWorker: 1 });
  assert.ok(
    Math.abs(at({ inFlightPerWorker: 4 }) - one) / one < 0.05,
    `q=1 ${one.toFixed(1)} ms, q=4 ${at({ inFlightPerWorker: 4 }).toFixed(1)} ms`,
  );
  const advice = recommend(model, scenario);
  const requests = advice.find((r) => r.kind === 'requests');
  assert.ok(
    !requests || requests.value === null || requests.value === 0,
    `requests in flight are not the fix: ${requests?.text}`,
  );
  const storage = advice.find((r) => r.kind === 'storage')!;
  assert.ok(storage.value !== null && storage.value > 4e6, storage.text);
});
