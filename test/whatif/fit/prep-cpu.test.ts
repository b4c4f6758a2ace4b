import { test } from 'node:test';
import assert from 'node:assert/strict';
import { effectiveParallelism } from '../../../src/whatif/cpu-scaling.js';
import { fitPrepCpu } from '../../../src/whatif/fit/prep-cpu.js';
import { loadProfile, modesOf, symbols, fittedValue } from './fixture.js';

test("fitPrepCpu: u is the cached mode's CPU per sample less the synthetic mode's; linear eff(c) through the prep-bound cached mode", () => {
  const profile = loadProfile();
  const modes = modesOf(profile);
  const fit = fittedValue(fitPrepCpu(profile, modes, 1, 0));
  const u = modes.cached.jobCpuSecPerSample! - modes.synthetic.jobCpuSecPerSample!;
  assert.equal(fit.value.prepCpuSecPerSample, u);
  assert.equal(fit.value.profiledCpus, profile.host.cpus);
  assert.deepEqual(symbols(fit), ['u', 'c0', 'eff/c']);
  // The cached mode (32 ms) was prep-bound against the synthetic one (10.5 ms): T_cached / b = R * u / eff(c0).
  const cachedSecPerSample = modes.cached.summary.iterMs.mean / 1000 / modes.cached.summary.samplesPerIter;
  assert.ok(
    Math.abs(effectiveParallelism(fit.value.cpuScaling, fit.value.profiledCpus) * cachedSecPerSample - u) < 1e-12,
  );
  assert.match(fit.parameters[2].source, /cached mode was prep-bound/);
  assert.equal(fit.value.cachedTime, modes.cached.summary, 'nothing to pool');
  assert.match(fit.caveats.join('\n'), /assumed to scale linearly with CPUs/);
});

test('fitPrepCpu: a cached mode no slower than the synthetic one takes a CPU as one CPU-second a second, never its pace', () => {
  const profile = loadProfile();
  const modes = modesOf(profile);
  const fast = {
    ...modes,
    cached: { ...modes.cached, summary: { ...modes.cached.summary, iterMs: { ...modes.synthetic.summary.iterMs } } },
  };
  const fit = fittedValue(fitPrepCpu(profile, fast, 1, 0));
  assert.deepEqual(fit.value.cpuScaling, { kind: 'linear', perCpu: 1 });
  assert.equal(fit.value.cpuShareAssumed, true);
  assert.equal(
    fit.parameters[2].note,
    'assumption: prep did not set the pace, so no measurement bounds a CPU from above',
  );
  // Prep-bound: measured, not assumed.
  assert.equal(fittedValue(fitPrepCpu(profile, modes, 1, 0)).value.cpuShareAssumed, false);
});

test('fitPrepCpu: a cached mode that used no more CPU than the synthetic one gives u = 0, said in the row', () => {
  const profile = loadProfile();
  const modes = modesOf(profile);
  const fit = fittedValue(
    fitPrepCpu(
      profile,
      { ...modes, cached: { ...modes.cached, jobCpuSecPerSample: modes.synthetic.jobCpuSecPerSample } },
      1,
      0,
    ),
  );
  assert.equal(fit.value.prepCpuSecPerSample, 0);
  assert.match(fit.parameters[0].note ?? '', /^not measurable/);
});

test("fitPrepCpu: a caller's curve is used as given; the profile's sweep is pooled with the cached mode at c0", () => {
  const profile = loadProfile();
  const modes = modesOf(profile);
  const curve = {
    kind: 'fitted' as const,
    points: [
      { cpus: 1, eff: 1 },
      { cpus: 2, eff: 1.5 },
    ],
    source: 'test sweep',
  };
  const given = fittedValue(fitPrepCpu(profile, modes, 1, 0, { cpuScaling: curve }));
  assert.equal(given.value.cpuScaling, curve);
  assert.deepEqual(symbols(given), ['u', 'c0', 'eff(c)']);
  assert.deepEqual(given.caveats, []);

  const all = Array.from({ length: profile.host.cpus }, (_, k) => k);
  const again = {
    ...modes.cached,
    cpus: all,
    summary: { ...modes.cached.summary, iterMs: { mean: 30, halfWidth: 0.5, proven: true } },
  };
  profile.cpuSweep = [{ ...modes.cached, cpus: [0] }, again];
  const swept = fittedValue(fitPrepCpu(profile, modesOf(profile), 1, 0));
  assert.equal(swept.value.cpuScaling.kind, 'fitted');
  const pooledMs = swept.value.cachedTime.iterMs.mean;
  assert.ok(
    pooledMs > 30 && pooledMs < modes.cached.summary.iterMs.mean,
    `pooled ${pooledMs} ms lies between the runs, nearer the tighter`,
  );
  assert.match(swept.caveats.join('\n'), /measured 2 CPUs 2 times/);
});

test('fitPrepCpu: a mode without its CPU per sample is not enough data, the cached one named first', () => {
  const profile = loadProfile();
  const modes = modesOf(profile);
  const fit = fitPrepCpu(
    profile,
    {
      ...modes,
      cached: { ...modes.cached, jobCpuSecPerSample: null },
      synthetic: { ...modes.synthetic, jobCpuSecPerSample: null },
    },
    1,
    0,
  );
  assert.equal(fit.kind === 'not-enough-data' && fit.missing, 'modes.cached.jobCpuSecPerSample');
  const noSynthetic = fitPrepCpu(
    profile,
    { ...modes, synthetic: { ...modes.synthetic, jobCpuSecPerSample: null } },
    1,
    0,
  );
  assert.equal(noSynthetic.kind === 'not-enough-data' && noSynthetic.missing, 'modes.synthetic.jobCpuSecPerSample');
});
