import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { counterAt, idleLoaderSpans, windowRates, windowReadProof } from '../../src/profile/window-rates.js';
import { proveState } from '../../src/profile/state-proof.js';
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

/** Recorded readings of a cold block of the unmodified imagenet main.py, with a validation pass between epochs. */
const recorded = JSON.parse(
  readFileSync(new URL('../../../test/fixtures/readings/imagenet-cold-block.json', import.meta.url), 'utf8'),
) as {
  meanFileBytes: number;
  iterations: (Iteration & { warmup?: boolean })[];
  epochs: { t: number; createMs: number; firstWaitMs: number; gapMs: number }[];
  samples: { t: number; jobReadBytes: number }[];
};

/** The recorded block's storage-read proof, with or without the spans the training loader was idle. */
function recordedProof(mode: 'cached' | 'cold', series: { t: number; bytes: number }[], aside: boolean) {
  const measured = recorded.iterations.filter((it) => !it.warmup);
  const spans = aside ? idleLoaderSpans([{ epochs: recorded.epochs }]) : [];
  const w = windowReadProof(series, measured, recorded.iterations, recorded.meanFileBytes, spans)!;
  const datasetBytes = 19.7e6;
  return proveState({
    mode,
    residentBytesBefore: mode === 'cached' ? datasetBytes : 0,
    datasetBytes,
    readBytes: w.readBytes,
    readBytesSource: 'recorded',
    consumedBytes: w.consumedBytes,
    jobAcknowledgedMode: true,
    fitsInMemory: true,
    ...(w.asideBytes !== undefined ? { asideBytes: w.asideBytes } : {}),
  });
}

test('reads while the training loader sat idle between epochs (validation, saves) do not count against a proof', () => {
  const series = recorded.samples.map((s) => ({ t: s.t, bytes: s.jobReadBytes }));
  const [gap] = idleLoaderSpans([{ epochs: recorded.epochs }]);
  assert.ok(gap.endMs - gap.startMs > 30_000, 'the validation pass and the save took 33 s between the epochs');
  // Cold: the validation set, evicted with the dataset, was read from storage during the gap (143% before).
  const before = recordedProof('cold', series, false);
  const after = recordedProof('cold', series, true);
  assert.ok(before.readFraction! > 1.4, `${before.readFraction}`);
  assert.ok(after.readFraction! > 0.9 && after.readFraction! < 1.2, `${after.readFraction}`);
  assert.match(after.reason, /not counted: 3\.\d MiB read while the training loader was idle between epochs/);
  // Cached: the same block with the dataset's own reads resident (the counter flat outside the gap) was unproven by
  // the validation pass's reads alone (29% of consumed bytes); left out, the cache held.
  const inGap = (t: number) => Math.min(Math.max(t, gap.startMs), gap.endMs);
  const gapOnly = series.map((s) => ({
    t: s.t,
    bytes: (counterAt(series, inGap(s.t), (x) => x.bytes) ?? 0) - (counterAt(series, gap.startMs, (x) => x.bytes) ?? 0),
  }));
  assert.equal(recordedProof('cached', gapOnly, false).proven, false);
  const cached = recordedProof('cached', gapOnly, true);
  assert.equal(cached.proven, true, cached.reason);
  assert.ok(cached.readFraction! < 0.01, `${cached.readFraction}`);
});

test('the loader is idle only where every rank is: the ranks idle spans intersect', () => {
  const epoch = (t: number, gapMs: number) => ({ t, createMs: 100, firstWaitMs: 100, gapMs });
  const spans = idleLoaderSpans([{ epochs: [epoch(10_200, 5_000)] }, { epochs: [epoch(12_200, 5_000)] }]);
  assert.deepEqual(spans, [{ startMs: 7_000, endMs: 10_000 }]);
  assert.deepEqual(idleLoaderSpans([{ epochs: [{ t: 1, createMs: 0, firstWaitMs: 0 }] }]), [], 'the first epoch');
});
