import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { fitCpuScaling } from '../../src/whatif/cpu-scaling.js';
import { readProfile } from '../../src/store/profile-store.js';
import { fitOrFail } from './fit-or-fail.js';

const FIXTURE = fileURLToPath(new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url));

test('runs at the same CPU count are pooled by precision: a noisy cached mode does not overwrite a tight sweep point', () => {
  const profile = readProfile(FIXTURE);
  const cached = profile.modes.cached!;
  const b = cached.summary!.samplesPerIter;
  const u = cached.jobCpuSecPerSample! - profile.modes.synthetic!.jobCpuSecPerSample!;
  const withTime = (cpus: number[], mean: number, halfWidth: number) => ({
    ...cached,
    cpus,
    summary: { ...cached.summary!, iterMs: { ...cached.summary!.iterMs, mean, halfWidth } },
  });
  const all = Array.from({ length: profile.host.cpus }, (_, k) => k);
  // The PyTorch case measured here: cached 78.9 ± 8.5 ms, the sweep at all CPUs 60.3 ± 2.9 ms.
  profile.modes.cached = withTime(all, 78.9, 8.5);
  profile.cpuSweep = [withTime([0], 120.8, 4.3), withTime(all, 60.3, 2.9)];
  const scaling = fitCpuScaling(profile)!;
  const w1 = 1 / 8.5 ** 2;
  const w2 = 1 / 2.9 ** 2;
  const pooledMs = (78.9 * w1 + 60.3 * w2) / (w1 + w2);
  const full = scaling.points.find((p) => p.cpus === all.length)!;
  assert.ok(
    Math.abs(full.eff - u / (pooledMs / 1000 / b)) < 1e-9,
    `eff at ${all.length} CPUs from the pooled ${pooledMs.toFixed(1)} ms`,
  );
  assert.ok(pooledMs > 60.3 && pooledMs < 63, 'the tight run weighs most');
  assert.match(scaling.source, /2 runs at \d+ CPUs pooled/);
  assert.equal(scaling.points.length, 2);
});

test('the model names the pooling in a caveat, and decides prep- and fetch-bound on the pooled time', () => {
  const profile = readProfile(FIXTURE);
  const cached = profile.modes.cached!;
  const all = Array.from({ length: profile.host.cpus }, (_, k) => k);
  profile.cpuSweep = [
    { ...cached, cpus: [0] },
    { ...cached, cpus: all },
  ];
  const model = fitOrFail(profile);
  assert.match(
    model.caveats.join('\n'),
    /the cached mode and the CPU sweep measured \d+ CPUs 2 times \(.* ms per iteration, .* ms per iteration\): the model uses their precision-weighted mean/,
  );
  // A curve given by the caller pools nothing: no caveat.
  const given = fitOrFail(profile, { cpuScaling: { kind: 'fitted', points: [{ cpus: 1, eff: 1 }], source: 'test' } });
  assert.doesNotMatch(given.caveats.join('\n'), /precision-weighted/);
});
