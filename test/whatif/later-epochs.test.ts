import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ProfileSchema, type Profile } from '../../src/schema/profile.js';
import { laterEpochs } from '../../src/whatif/later-epochs.js';
import { baseScenario, predict } from '../../src/whatif/model.js';
import { fitOrFail } from './fit-or-fail.js';

const FIXTURE = new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url);
const REMOTE = new URL('../../../test/fixtures/profiles/remote-capped.json', import.meta.url);

function load(url: URL, memoryBudgetBytes?: number): Profile {
  const profile = ProfileSchema.parse(JSON.parse(readFileSync(url, 'utf8')));
  if (memoryBudgetBytes !== undefined) profile.dataset.memoryBudgetBytes = memoryBudgetBytes;
  return profile;
}

test('a page cache that holds the dataset: epochs 2+ at the cached pace, measured, no fetch stall, the first epoch apart', () => {
  const profile = load(FIXTURE, 10 * 2 ** 30);
  const later = laterEpochs(profile)!;
  assert.equal(later.basis, 'measured');
  assert.equal(later.holdsDataset, true);
  assert.equal(later.hitRatio, 1);
  assert.equal(later.policy, undefined);
  const analysis = profile.analysis!;
  assert.equal(
    later.iterMs.mean,
    analysis.iterMs!.mean - analysis.fetchStallMs!.mean,
    'the real pace less the fetch stall',
  );
  assert.equal(
    later.iterMs.halfWidth,
    profile.modes.cached!.summary!.iterMs.halfWidth,
    "the cached mode's interval (no stall added back here)",
  );
  assert.ok(
    Math.abs(later.iterMs.mean - profile.modes.cached!.summary!.iterMs.mean) < 1,
    'this profile has no checkpoint or boundary stall: the cached pace',
  );
  assert.deepEqual(later.prepStallMs, profile.analysis!.prepStallMs);
  assert.equal(later.fetchStallMs.mean, 0);
  // The cold verdict is fetch-bound; from memory the prep stall (26% of the cold iteration) is a larger share of a
  // shorter one.
  assert.match(profile.analysis!.verdict.text, /fetch-bound/);
  const prepShare = profile.analysis!.prepStallMs!.mean / later.iterMs.mean;
  assert.equal(later.bound, prepShare >= 0.1 ? 'prep' : 'compute');
  assert.match(later.text, /at the cached pace .* fits in this machine's page cache .* read nothing from storage/);
  assert.match(
    later.text,
    /the first epoch alone, from storage, adds a fetch stall of \d+\.\d ± \d+\.\d ms an iteration$/,
  );
});

test("a page cache of half the dataset: epochs 2+ are the what-if's steady state there, said to be predicted and under which policy", () => {
  const full = load(FIXTURE);
  const profile = load(FIXTURE, Math.round(full.dataset.bytes / 2));
  const later = laterEpochs(profile)!;
  assert.equal(later.basis, 'predicted');
  assert.equal(later.holdsDataset, false);
  assert.equal(later.policy, "the kernel's two lists");
  const model = fitOrFail(profile);
  const expected = predict(model, baseScenario(model));
  assert.equal(later.iterMs.mean, expected.iterMs);
  assert.equal(later.iterMs.halfWidth, null, 'a prediction has no interval');
  assert.equal(later.fetchStallMs.mean, expected.fetchStallMs);
  assert.equal(later.hitRatio, expected.steadyHitRatio);
  assert.ok(
    later.hitRatio > 0 && later.hitRatio < 0.5,
    `half the dataset under LRU and shuffled epochs hits less than half: ${later.hitRatio}`,
  );
  // Faster than the cold pace (some hits), slower than the cached one (some misses).
  assert.ok(later.iterMs.mean < profile.modes.cold!.summary!.iterMs.mean);
  assert.ok(later.iterMs.mean > profile.modes.cached!.summary!.iterMs.mean);
  assert.match(
    later.text,
    /^predicted .*serves \d+% of the reads in the steady state, simulated as the kernel's two lists \(assumed: the profile does not record the kernel's lru_gen\)/,
  );
});

test('remote data the job keeps no copy of: every epoch fetches again, at the cold pace', () => {
  const profile = load(REMOTE);
  const later = laterEpochs(profile)!;
  assert.equal(later.cacheBytes, 0);
  assert.equal(later.holdsDataset, false);
  assert.equal(later.hitRatio, 0);
  assert.equal(later.bound, 'fetch');
  const cold = profile.modes.cold!.summary!.iterMs.mean;
  assert.ok(Math.abs(later.iterMs.mean - cold) / cold < 0.1, `${later.iterMs.mean} against the cold ${cold} ms`);
});

test('a checkpoint stall is paid in every epoch: a fetch-bound first epoch whose dataset fits is checkpoint-bound after it', () => {
  const profile = load(FIXTURE, 10 * 2 ** 30);
  const analysis = profile.analysis!;
  const checkpointMs = 0.3 * analysis.iterMs!.mean;
  analysis.checkpointStall = {
    ms: { mean: checkpointMs, halfWidth: 1, proven: true },
    call: 'stall',
  } as unknown as typeof analysis.checkpointStall;
  analysis.iterMs = { ...analysis.iterMs!, mean: analysis.iterMs!.mean + checkpointMs };
  const later = laterEpochs(profile)!;
  assert.equal(later.bound, 'checkpoint');
  assert.equal(
    later.iterMs.halfWidth,
    Math.hypot(profile.modes.cached!.summary!.iterMs.halfWidth!, 1, 0),
    "the cached mode's interval with the checkpoint stall's",
  );
  assert.match(
    later.text,
    /^moderately checkpoint-bound: \d+% of each iteration is spent saving checkpoints, at the cached pace/,
  );
  // Predicted too: the stall measured apart is added to the model's steady pace.
  const half = load(FIXTURE, Math.round(profile.dataset.bytes / 2));
  half.analysis!.checkpointStall = analysis.checkpointStall;
  const model = fitOrFail(half);
  assert.equal(laterEpochs(half)!.iterMs.mean, predict(model, baseScenario(model)).iterMs + checkpointMs);
});

test('without the cold mode there are no later epochs to tell', () => {
  const profile = load(FIXTURE);
  delete profile.modes.cold;
  assert.equal(laterEpochs(profile), null);
});
