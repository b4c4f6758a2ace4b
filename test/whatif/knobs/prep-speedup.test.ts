/**
 * --prep-speedup Y divides the prep CPU per sample u by Y: a prep-bound job speeds up by Y until another stage
 * sets the pace, and a job bound elsewhere does not move.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { Profile } from '../../../src/schema/profile.js';
import { PREP_SPEEDUP_KNOB } from '../../../src/whatif/knobs/prep-speedup.js';
import { parseKnobFlags } from '../../../src/whatif/knobs/query.js';
import { baseScenario, fitModel, isNotEnoughData, predict } from '../../../src/whatif/model.js';

const FIXTURE = new URL('../../../../test/fixtures/profiles/emulated-quick.json', import.meta.url);
const profile = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Profile;

function fitted() {
  const fit = fitModel(profile);
  assert.ok(!isNotEnoughData(fit), 'the fixture fits');
  return fit.model;
}

test('--prep-speedup parses to the scenario field; 1 asks for nothing', () => {
  assert.deepEqual(parseKnobFlags({ prepSpeedup: '2.5' }).query, { prepSpeedup: 2.5 });
  assert.deepEqual(parseKnobFlags({ prepSpeedup: '1' }).query, {});
  assert.throws(() => parseKnobFlags({ prepSpeedup: '-2' }), /--prep-speedup/);
});

test('a faster prep shortens the prep stage by its factor, and the pace follows while prep sets it', () => {
  const model = fitted();
  // The whole dataset cached and the fastest accelerator: nothing but prep can set the pace.
  const base = { ...baseScenario(model), cacheBytes: profile.dataset.bytes, gpuSpeedup: 1000 };
  const asProfiled = predict(model, base);
  const twice = predict(model, { ...base, prepSpeedup: 2 });
  assert.equal(asProfiled.bottleneck, 'prep');
  assert.ok(
    Math.abs(twice.samplesPerSec / asProfiled.samplesPerSec - 2) < 0.05,
    `prep-bound: 2x prep gives ${twice.samplesPerSec / asProfiled.samplesPerSec}x`,
  );
});

test('a faster prep does not move a job bound by its accelerator', () => {
  const model = fitted();
  const base = { ...baseScenario(model), cacheBytes: profile.dataset.bytes, gpuSpeedup: 0.01 };
  const asProfiled = predict(model, base);
  assert.equal(asProfiled.bottleneck, 'compute');
  assert.equal(predict(model, { ...base, prepSpeedup: 4 }).samplesPerSec, asProfiled.samplesPerSec);
});

test("the 'asked:' line names a prep speed-up only where one was asked", () => {
  const model = fitted();
  assert.equal(PREP_SPEEDUP_KNOB.asked?.(baseScenario(model)), null);
  assert.equal(PREP_SPEEDUP_KNOB.asked?.({ ...baseScenario(model), prepSpeedup: 2 }), 'prep speed-up 2x');
});
