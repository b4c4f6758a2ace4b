import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { rangeError } from '../../src/validate/run-validate.js';
import { fitCpuScaling } from '../../src/whatif/cpu-scaling.js';
import { readProfile } from '../../src/profile/profile-store.js';

const FIXTURE = fileURLToPath(new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url));

test('a measured rate inside the predicted range has no error; outside, the error is from the nearer end', () => {
  assert.equal(rangeError(60, 75, 62), 0);
  assert.equal(rangeError(75, 60, 62), 0);
  assert.ok(Math.abs(rangeError(60, 75, 50) - 0.2) < 1e-12);
  assert.ok(Math.abs(rangeError(60, 75, 100) - -0.25) < 1e-12);
});

test('without a CPU sweep there is no fitted scaling (the model then assumes linear and says so)', () => {
  assert.equal(fitCpuScaling(readProfile(FIXTURE)), null);
});

test('a CPU sweep gives eff(c) = R*u*b / T_cached(c) at each CPU count, ascending', () => {
  const profile = readProfile(FIXTURE);
  const cached = profile.modes.cached!;
  const u = cached.jobCpuSecPerSample! - profile.modes.synthetic!.jobCpuSecPerSample!;
  const slower = { ...cached, cpus: [0], summary: { ...cached.summary!, iterMs: { ...cached.summary!.iterMs, mean: cached.summary!.iterMs.mean * 2 } } };
  profile.cpuSweep = [slower];
  const scaling = fitCpuScaling(profile)!;
  assert.equal(scaling.kind, 'fitted');
  assert.deepEqual(scaling.points.map((p) => p.cpus), [1, profile.host.cpus]);
  const secPerSample = (cached.summary!.iterMs.mean / 1000) / cached.summary!.samplesPerIter;
  assert.ok(Math.abs(scaling.points[1].eff - u / secPerSample) < 1e-9);
  assert.ok(Math.abs(scaling.points[0].eff - scaling.points[1].eff / 2) < 1e-9, 'twice the time per sample: half the parallelism');
});
