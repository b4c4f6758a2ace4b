import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { fitCpuScaling } from '../../src/whatif/cpu-scaling.js';
import { readProfile } from '../../src/store/profile-store.js';
import { anchorToControl } from '../../src/validate/results.js';
import { baseScenario, predict, stageTimes } from '../../src/whatif/model.js';
import { fitOrFail } from '../whatif/fit-or-fail.js';

const FIXTURE = fileURLToPath(new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url));

test('without a CPU sweep there is no fitted scaling (the model then assumes linear and says so)', () => {
  assert.equal(fitCpuScaling(readProfile(FIXTURE)), null);
});

test('a CPU sweep gives eff(c) = R*u*b / T_cached(c) at each CPU count, ascending', () => {
  const profile = readProfile(FIXTURE);
  const cached = profile.modes.cached!;
  const u = cached.jobCpuSecPerSample! - profile.modes.synthetic!.jobCpuSecPerSample!;
  const slower = {
    ...cached,
    cpus: [0],
    summary: { ...cached.summary!, iterMs: { ...cached.summary!.iterMs, mean: cached.summary!.iterMs.mean * 2 } },
  };
  profile.cpuSweep = [slower];
  const scaling = fitCpuScaling(profile)!;
  assert.equal(scaling.kind, 'fitted');
  assert.deepEqual(
    scaling.points.map((p) => p.cpus),
    [1, profile.host.cpus],
  );
  const secPerSample = cached.summary!.iterMs.mean / 1000 / cached.summary!.samplesPerIter;
  assert.ok(Math.abs(scaling.points[1].eff - u / secPerSample) < 1e-9);
  assert.ok(
    Math.abs(scaling.points[0].eff - scaling.points[1].eff / 2) < 1e-9,
    'twice the time per sample: half the parallelism',
  );
});

test('anchored to a control run 1.5x slower: compute and prep take 1.5x, storage is unchanged', () => {
  const model = fitOrFail(readProfile(FIXTURE));
  const slower = anchorToControl(model, 1.5);
  const whole = { ...baseScenario(model), cacheBytes: model.datasetBytes, epochs: null };
  const cold = { ...whole, cacheBytes: 0 };
  const t = stageTimes(model, whole, 1);
  const ts = stageTimes(slower, whole, 1);
  assert.ok(Math.abs(ts.gpu - 1.5 * t.gpu) < 1e-12 && Math.abs(ts.prep - 1.5 * t.prep) < 1e-12);
  // The step with its hand-over and its slow-down beside the loader is CPU work too.
  const beside = { ...model, handoverSecPerIter: 0.004, contentionSecPerIter: 0.002 };
  const step = stageTimes(beside, whole, 1).step;
  assert.ok(Math.abs(stageTimes(anchorToControl(beside, 1.5), whole, 1).step - 1.5 * step) < 1e-12);
  assert.equal(stageTimes(slower, cold, 0).fetch, stageTimes(model, cold, 0).fetch);
  // Everything cached: the pace is CPU-bound, so the rate falls by exactly 1.5.
  assert.ok(Math.abs(predict(slower, whole).samplesPerSec - predict(model, whole).samplesPerSec / 1.5) < 1e-9);
});
