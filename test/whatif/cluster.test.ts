/**
 * What-ifs for clusters (CoorDL): K jobs on one dataset, independent against
 * coordinated prep; N nodes, each caching alone against one partitioned cache.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { readProfile } from '../../src/store/profile-store.js';
import { baseScenario, predict } from '../../src/whatif/model.js';
import { whatif, type WhatifResult } from '../../src/whatif/whatif.js';
import { WhatifOutputSchema } from '../../src/schema/whatif-output.js';
import { whatifOutput } from '../../src/schema/output-headers.js';
import { renderWhatif } from '../../src/report/whatif-terminal.js';
import { fitOrFail } from './fit-or-fail.js';

const FIXTURE = fileURLToPath(new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url));

test('--jobs K: independent jobs share the CPUs and storage (K preps, K reads), coordinated ones do each once; one job is the profiled prediction', () => {
  const profile = readProfile(FIXTURE);
  const model = fitOrFail(profile);
  const one = predict(model, baseScenario(model));
  assert.deepEqual(predict(model, { ...baseScenario(model), jobs: 1 }), {
    ...one,
    scenario: { ...one.scenario, jobs: 1 },
  });
  const result = whatif(profile, FIXTURE, { jobs: 3 });
  assert.ok(!('kind' in result && result.kind === 'not-enough-data'));
  const jobs = (result as WhatifResult).jobs!;
  assert.equal(jobs.count, 3);
  // Coordinated: each sample read and prepared once, so the three jobs together run up to 3x one job, never below
  // independent.
  assert.ok(jobs.coordinated.samplesPerSec >= jobs.independent.samplesPerSec);
  assert.ok(jobs.coordinated.samplesPerSec <= 3 * one.samplesPerSec + 1e-9);
  // Independent: three times the demand on the same CPUs and storage; together no faster than 3x one job.
  assert.ok(jobs.independent.samplesPerSec <= 3 * one.samplesPerSec + 1e-9);
  assert.ok(Math.abs(jobs.speedup - jobs.coordinated.samplesPerSec / jobs.independent.samplesPerSec) < 1e-12);
  // A fetch-bound profile reads K times over when independent: its throughput stays at storage's, split K ways.
  const cold = { ...baseScenario(model), cacheBytes: 0 };
  const fetchBound = predict(model, cold);
  assert.equal(fetchBound.bottleneck, 'fetch', 'the fixture reads storage slower than it prepares');
  const independent = predict(model, { ...cold, jobs: 3 });
  assert.ok(
    Math.abs(independent.samplesPerSec - fetchBound.samplesPerSec) <= 0.05 * fetchBound.samplesPerSec,
    `${independent.samplesPerSec} vs ${fetchBound.samplesPerSec}`,
  );
  const coordinated = predict(model, { ...cold, jobs: 3, coordinated: true });
  assert.ok(coordinated.samplesPerSec > 2 * independent.samplesPerSec, 'one read of each sample feeds all three');
  assert.match((result as { caveats: string[] }).caveats.join('\n'), /3 jobs share the cache/);
});

test('--nodes N --cache-policy partitioned: N caches hold the dataset once, a miss on one node read from its peer; each node caching alone hits as one node does', () => {
  const profile = readProfile(FIXTURE);
  const model = fitOrFail(profile);
  const d = model.datasetBytes;
  const one = predict(model, { ...baseScenario(model), cacheBytes: d / 4 });
  // Four nodes each caching a quarter alone: each hits as one node with a quarter does; four nodes train at once.
  const alone = predict(model, { ...baseScenario(model), cacheBytes: d / 4, nodes: 4 });
  assert.equal(alone.steadyHitRatio, one.steadyHitRatio);
  assert.ok(Math.abs(alone.samplesPerSec - 4 * one.samplesPerSec) < 1e-9 * one.samplesPerSec);
  // Partitioned, the four quarters hold the whole dataset: every read is a hit, 3 in 4 from a peer.
  const fastPeers = {
    ...baseScenario(model),
    cacheBytes: d / 4,
    nodes: 4,
    partitioned: true,
    cachePolicy: 'minio' as const,
    peerBytesPerSec: 1e12,
  };
  const partitioned = predict(model, fastPeers);
  assert.equal(partitioned.steadyHitRatio, 1);
  assert.equal(partitioned.fetchStallMs, 0, 'peers this fast cost nothing');
  // A slow network between the nodes brings a fetch stall back: 3 in 4 samples over it.
  const slow = predict(model, { ...fastPeers, peerBytesPerSec: 1e5 });
  const perSampleSec = (model.profiledRanks * (3 / 4) * model.bytesPerSample) / 1e5;
  assert.ok(
    slow.fetchStallMs > 0 && slow.iterMs / 1000 / model.samplesPerIter >= 0.99 * perSampleSec,
    `${slow.iterMs} ms`,
  );

  const result = whatif(profile, FIXTURE, {
    cacheBytes: d / 4,
    nodes: 4,
    partitioned: true,
    cachePolicy: 'minio',
    peerBytesPerSec: 1e9,
  }) as WhatifResult;
  const nodes = result.nodes!;
  assert.equal(nodes.count, 4);
  assert.ok(
    nodes.partitioned.samplesPerSec > nodes.independent.samplesPerSec,
    'a cache the size of the dataset over the nodes beats four quarter caches on fetch-bound data',
  );
  assert.ok(Math.abs(nodes.speedup - nodes.partitioned.samplesPerSec / nodes.independent.samplesPerSec) < 1e-12);
  assert.match(result.caveats.join('\n'), /the collectives between nodes .* are not modelled/);
  const parsed = WhatifOutputSchema.strict().safeParse(whatifOutput(result));
  assert.ok(parsed.success, parsed.success ? '' : parsed.error.message);
  const text = renderWhatif(result);
  assert.match(text, /4 nodes of this job:/);
  assert.match(text, /the partitioned cache gives [\d.]+x the throughput/);
});
