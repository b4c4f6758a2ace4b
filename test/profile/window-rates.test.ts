import { test } from 'node:test';
import assert from 'node:assert/strict';
import { counterAt, windowRates } from '../../src/profile/window-rates.js';
import type { Iteration, ResourceSample } from '../../src/schema/profile.js';

const sample = (t: number, jobCpuSec: number): ResourceSample => ({
  t,
  cpuPct: 0,
  jobCpuSec,
  jobProcesses: 1,
  jobReadBytes: jobCpuSec * 1e6,
  diskReadBytesPerSec: 0,
  pageCacheBytes: 0,
});

test('counters are interpolated linearly between samples and clamped at the ends', () => {
  const samples = [sample(1000, 0), sample(2000, 1), sample(3000, 3)];
  assert.equal(
    counterAt(samples, 1500, (s) => s.jobCpuSec),
    0.5,
  );
  assert.equal(
    counterAt(samples, 2500, (s) => s.jobCpuSec),
    2,
  );
  assert.equal(
    counterAt(samples, 0, (s) => s.jobCpuSec),
    0,
  );
  assert.equal(
    counterAt(samples, 9999, (s) => s.jobCpuSec),
    3,
  );
});

test('window rate: counter growth over the measured iterations, per second and per sample', () => {
  // CPU grows 1 s per s; 10 iterations of 100 ms with 4 samples each, from t=1000 to t=2000.
  const samples = [sample(0, 0), sample(3000, 3)];
  const measured: Iteration[] = Array.from({ length: 10 }, (_, k) => ({
    i: k,
    t: 1000 + k * 100 + 50,
    waitMs: 50,
    computeMs: 50,
    samples: 4,
  }));
  const rates = windowRates(samples, measured, (s) => s.jobCpuSec)!;
  assert.ok(Math.abs(rates.perSec - 1) < 1e-9);
  assert.ok(Math.abs(rates.perSample - 1 / 40) < 1e-9);
});

test('no rate when the samples do not cover the window', () => {
  const measured: Iteration[] = [
    { i: 0, t: 10_000, waitMs: 1, computeMs: 1, samples: 1 },
    { i: 1, t: 20_000, waitMs: 1, computeMs: 1, samples: 1 },
  ];
  assert.equal(
    windowRates([sample(0, 0), sample(1000, 1)], measured, (s) => s.jobCpuSec),
    null,
  );
});
