import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ProfileSchema, type Profile } from '../../src/schema/profile.js';
import { whatifOutput } from '../../src/schema/output-headers.js';
import { assertFollowsSchema } from '../schema/follows-schema.js';
import { WhatifOutputSchema } from '../../src/schema/whatif-output.js';
import { isNotEnoughData, type Scenario } from '../../src/whatif/model.js';
import { whatif, type WhatifQuery, type WhatifResult } from '../../src/whatif/whatif.js';

const FIXTURE = new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url);
const load = (): Profile => ProfileSchema.parse(JSON.parse(readFileSync(FIXTURE, 'utf8')));

/** The fixture as `profile --modes synthetic,cached` would have written it. */
function withoutCold(): Profile {
  const profile = load();
  delete profile.modes.cold;
  return profile;
}

function answered(profile: Profile, query: WhatifQuery): WhatifResult {
  const result = whatif(profile, 'p.json', query);
  assert.ok(!isNotEnoughData(result), isNotEnoughData(result) ? result.reason : '');
  return result as WhatifResult;
}

// Compute and prep need no cold mode: each answer equals the full profile's with the whole dataset in a cache
// that never evicts (no read ever waits), which is what the model without the fetch stage predicts.
const QUESTIONS: [string, WhatifQuery][] = [
  ['--workers 8', { workers: 8 }],
  ['--workers 0', { workers: 0 }],
  ['--cpus 8', { cpus: 8 }],
  ['--cpus 1', { cpus: 1 }],
  ['--gpus 2', { gpus: 2 }],
  ['--gpu-speedup 3', { gpuSpeedup: 3 }],
];

for (const [flags, query] of QUESTIONS) {
  test(`without the cold mode, ${flags} is answered as the full profile answers it with no read waiting`, () => {
    const full = load();
    const all: Partial<Scenario> = { cacheBytes: full.dataset.bytes, cachePolicy: 'minio' };
    const expected = answered(full, { ...query, ...all }).prediction;
    const got = answered(withoutCold(), query);
    assert.equal(expected.fetchStallMs, 0, 'the reference reads nothing from storage');
    assert.ok(
      Math.abs(got.prediction.samplesPerSec - expected.samplesPerSec) <= 1e-9 * expected.samplesPerSec,
      `${got.prediction.samplesPerSec} vs ${expected.samplesPerSec}`,
    );
    assert.equal(got.prediction.bottleneck, expected.bottleneck);
    assert.deepEqual(got.changed, Object.keys(query));
    assert.equal(got.prediction.fetchStallMs, 0);
  });
}

test('without the cold mode the answer says in one line what needs it, drops the cache sweep and the fetch advice, and follows the JSON contract', () => {
  const result = answered(withoutCold(), { workers: 8 });
  assert.deepEqual(result.unanswered, [
    "the cache and storage that would remove a fetch stall need the cold mode (the profile lacks modes.cold): re-run 'ds-analyzer profile' with the cold mode (it measures storage bandwidth)",
  ]);
  assert.deepEqual(result.cacheSweep, []);
  assert.deepEqual(new Set(result.recommendations.map((r) => r.kind)), new Set(['workers', 'cpus']));
  assert.ok(result.caveats.some((c) => c.startsWith('reads are taken never to wait')));
  assert.equal(result.prediction.scenario.storageBytesPerSec, 0);
  assert.equal(result.validateCommand, null, 'validate needs the cold mode too: no run to offer');
  assertFollowsSchema(
    WhatifOutputSchema,
    JSON.parse(JSON.stringify(whatifOutput(result))),
    'whatif --json without the cold mode',
  );
  // The full profile answers everything.
  assert.deepEqual(answered(load(), { workers: 8 }).unanswered, []);
});

test('without the cold mode, cache and storage flags asked beside an answerable one are named and left as profiled', () => {
  const result = answered(withoutCold(), { workers: 8, cacheBytes: 0, storageBytesPerSec: 1e8, epochs: 3 });
  assert.deepEqual(result.changed, ['workers']);
  assert.equal(result.prediction.scenario.epochs, null);
  assert.match(
    result.unanswered[0],
    /^not answered: --cache, --storage-bw and --epochs need the cold mode \(the profile lacks modes\.cold\): re-run/,
  );
});

test('without the cold mode, a query of only cache and storage questions is not enough data, in one line', () => {
  const answer = whatif(withoutCold(), 'p.json', { cacheBytes: 0, storageBytesPerSec: 1e8 });
  assert.ok(isNotEnoughData(answer));
  assert.equal(answer.missing, 'modes.cold');
  assert.equal(answer.reason.split('\n').length, 1);
  assert.match(answer.reason, /^not answered: --cache and --storage-bw need the cold mode/);
  const partitioned = whatif(withoutCold(), 'p.json', {
    nodes: 2,
    partitioned: true,
    cachePolicy: 'minio',
    peerBytesPerSec: 1e9,
  });
  assert.ok(!isNotEnoughData(partitioned), 'the nodes themselves are answered');
  assert.match(
    (partitioned as WhatifResult).unanswered[0],
    /^not answered: --cache-policy partitioned and --peer-bw need the cold mode/,
  );
});

test('a cold mode that read nothing from storage is the same missing piece: named, the rest answered', () => {
  const profile = load();
  profile.modes.cold!.storageReadBytesPerSec = null;
  const result = answered(profile, { cpus: 4 });
  assert.match(result.unanswered[0], /lacks modes\.cold\.storageReadBytesPerSec/);
  assert.equal(result.prediction.firstBatchSec, undefined, 'the first batch is a read from storage too');
});

test('a stalled cold mode is as good as none: the same answers, and the reason names the stall', () => {
  const stalled = load();
  stalled.modes.cold!.stalled = { cause: 'no-bytes', atSec: 12, silentSec: 48, text: 'the endpoint sent nothing' };
  for (const [flags, query] of QUESTIONS) {
    const got = answered(stalled, query);
    const expected = answered(withoutCold(), query);
    assert.equal(got.prediction.samplesPerSec, expected.prediction.samplesPerSec, flags);
    assert.equal(got.prediction.fetchStallMs, 0, flags);
  }
  assert.match(answered(stalled, { workers: 8 }).unanswered.join('\n'), /a cold mode that did not stall/);
});
