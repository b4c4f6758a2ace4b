import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COVERAGE_TOLERANCE, prepStages, sumStageTotals } from '../../src/analysis/prep-stages.js';
import { analyze } from '../../src/analysis/split.js';
import { readStageFiles, stageTotalsBetween } from '../../src/profile/stage-files.js';
import { prepStagesLines } from '../../src/report/prep-stages-lines.js';
import { prepStageAdvice } from '../../src/whatif/prep-stage-advice.js';
import type { StagesEvent } from '../../src/schema/events.js';
import type { PrepStageTotals } from '../../src/schema/profile.js';
import { modeResult } from './modes.js';

/** Totals as a loader reports them: 1,000 samples, ms per sample given by stage. */
function totals(
  perSample: Record<string, [string, number]>,
  unnamedMsPerSample = 0.2,
  samples = 1000,
): PrepStageTotals {
  const stages = Object.entries(perSample).map(([name, [kind, ms]]) => ({
    kind,
    name,
    ms: ms * samples,
    calls: kind === 'collate' ? samples / 10 : samples,
  }));
  const fetchMs = stages.reduce((sum, s) => sum + s.ms, 0) + unnamedMsPerSample * samples;
  return { processes: 2, samples, batches: samples / 10, fetchMs, fetchCpuMs: 0.95 * fetchMs, stages };
}

const IMAGENET_LIKE = {
  decode: ['decode', 5.0],
  RandomResizedCrop: ['transform', 1.2],
  ToTensor: ['transform', 0.6],
  read: ['read', 0.3],
  collate: ['collate', 0.1],
} as Record<string, [string, number]>;

test('each stage costs its time over the samples, costliest first, with its share of the loader time', () => {
  const cached = { ...modeResult('cached', { iterMs: 100 }), prepStages: totals(IMAGENET_LIKE) };
  const s = prepStages({ cached, prepCpuSecPerSample: 0.0078, gpus: 1 })!;
  assert.deepEqual(
    s.stages.map((x) => x.name),
    ['decode', 'RandomResizedCrop', 'ToTensor', 'read', 'collate'],
  );
  assert.ok(Math.abs(s.stages[0].msPerSample - 5.0) < 1e-9);
  assert.ok(Math.abs(s.fetchMsPerSample - 7.4) < 1e-9);
  assert.ok(Math.abs(s.stages[0].share - 5.0 / 7.4) < 1e-9);
  assert.ok(Math.abs(s.stagesMsPerSample - 7.2) < 1e-9);
  assert.ok(Math.abs(s.unnamedMsPerSample - 0.2) < 1e-9);
  // The fetch ran 95% of its wall time on a CPU: each stage's CPU is its wall time x 0.95.
  assert.ok(Math.abs(s.fetchCpuShare - 0.95) < 1e-9);
  assert.ok(Math.abs(s.fetchCpuMsPerSample - 0.95 * 7.4) < 1e-9);
  assert.ok(Math.abs(s.stages[0].cpuMsPerSample - 0.95 * 5.0) < 1e-9);
  assert.ok(Math.abs(s.stagesCpuMsPerSample - 0.95 * 7.2) < 1e-9);
  // 6.84 of the 7.8 ms measured: 88%, within the tolerance.
  assert.ok(Math.abs(s.coverage! - (0.95 * 7.2) / 7.8) < 1e-9);
  assert.equal(s.withinTolerance, true);
  assert.match(s.copy, /not timed by stage/);
});

test('a sum far from the measured prep CPU is not within the tolerance, either way', () => {
  const cached = { ...modeResult('cached', { iterMs: 100 }), prepStages: totals(IMAGENET_LIKE) };
  const low = prepStages({
    cached,
    prepCpuSecPerSample: (0.95 * 7.2) / (1 - COVERAGE_TOLERANCE - 0.05) / 1000,
    gpus: 1,
  })!;
  assert.equal(low.withinTolerance, false);
  const high = prepStages({
    cached,
    prepCpuSecPerSample: (0.95 * 7.2) / (1 + COVERAGE_TOLERANCE + 0.05) / 1000,
    gpus: 1,
  })!;
  assert.equal(high.withinTolerance, false);
  const edge = prepStages({
    cached,
    prepCpuSecPerSample: (0.95 * 7.2) / (1 - COVERAGE_TOLERANCE + 0.01) / 1000,
    gpus: 1,
  })!;
  assert.equal(edge.withinTolerance, true);
});

test('without a measured prep CPU the sum is given and not checked; without a GPU there is no copy', () => {
  const cached = { ...modeResult('cached', { iterMs: 100 }), prepStages: totals(IMAGENET_LIKE) };
  const s = prepStages({ cached, prepCpuSecPerSample: null, gpus: 0 })!;
  assert.equal(s.coverage, null);
  assert.equal(s.withinTolerance, null);
  assert.match(s.copy, /no host-to-device copy/);
  const lines = prepStagesLines({ analysis: { prepStages: s } as never });
  assert.match(lines.join('\n'), /not measured .*: not checked/);
});

test('no stages reported, no block: the synthetic mode and jobs without the hook', () => {
  assert.equal(
    prepStages({ cached: modeResult('cached', { iterMs: 100 }), prepCpuSecPerSample: 0.005, gpus: 1 }),
    null,
  );
  assert.equal(prepStages({ cached: undefined, prepCpuSecPerSample: null, gpus: 1 }), null);
  assert.deepEqual(prepStagesLines({ analysis: null } as never), []);
});

test('analyze() reads the cached mode against its measured prep CPU', () => {
  const syn = modeResult('synthetic', { iterMs: 50, jobCpuSecPerSample: 0.002 });
  const cached = {
    ...modeResult('cached', { iterMs: 100, jobCpuSecPerSample: 0.0098 }),
    prepStages: totals(IMAGENET_LIKE),
  };
  const a = analyze({ synthetic: syn, cached }, { cpus: 4, gpus: 0 });
  assert.ok(a.prepStages);
  assert.ok(Math.abs(a.prepStages.measuredPrepCpuMsPerSample! - 7.8) < 1e-9);
  assert.equal(a.prepStages.withinTolerance, true);
  const lines = prepStagesLines({ analysis: a });
  assert.match(
    lines[0],
    /^prep stages \(cached mode, 1000 samples; 7\.03 ms CPU\/sample in the loader's processes\):$/,
  );
  assert.match(lines[1], /^ {2}decode: 4\.75 ms CPU\/sample, 68%$/);
  assert.ok(
    lines.some((l) => /in no named stage .*: 0\.19 ms CPU\/sample, 3%/.test(l)),
    lines.join('\n'),
  );
  assert.ok(
    lines.some((l) =>
      /^ {2}the stages add up to 6\.84 ms, 88% of the 7\.80 ms prep CPU measured per sample: within 25% of it$/.test(l),
    ),
    lines.join('\n'),
  );
  assert.ok(
    lines.some((l) => /^ {2}the other 0\.96 ms: moving batches/.test(l)),
    lines.join('\n'),
  );
  for (const l of lines.slice(1)) assert.ok(l.length <= 120, l);
});

test('loader processes that waited for a core: each stage is charged its share of the CPU they ran, and the heading says so', () => {
  const waited = { ...totals(IMAGENET_LIKE), fetchCpuMs: 0.44 * totals(IMAGENET_LIKE).fetchMs };
  const s = prepStages({
    cached: { ...modeResult('cached', { iterMs: 100 }), prepStages: waited },
    prepCpuSecPerSample: 0.004,
    gpus: 1,
  })!;
  assert.ok(Math.abs(s.stages[0].cpuMsPerSample - 0.44 * 5.0) < 1e-9);
  assert.ok(Math.abs(s.coverage! - (0.44 * 7.2) / 4) < 1e-9);
  // Shares of the loader's time do not depend on the clock.
  assert.ok(Math.abs(s.stages[0].share - 5.0 / 7.4) < 1e-9);
  const lines = prepStagesLines({ analysis: { prepStages: s } as never });
  assert.match(lines[1], /^ {2}the loader ran 44% of its time on a CPU \(waiting for one\): stage CPU = wall x 0\.44$/);
});

test('runs and nodes add their totals stage by stage', () => {
  const a = totals({ decode: ['decode', 2], collate: ['collate', 0.1] });
  const b = totals({ decode: ['decode', 4], Resize: ['transform', 1] });
  const sum = sumStageTotals([a, undefined, b])!;
  assert.equal(sum.samples, 2000);
  assert.equal(sum.processes, 4);
  const byName = Object.fromEntries(sum.stages.map((s) => [s.name, s]));
  assert.equal(byName.decode.ms, 6000);
  assert.equal(byName.decode.calls, 2000);
  assert.equal(byName.Resize.ms, 1000);
  assert.equal(sumStageTotals([undefined]), undefined);
});

function line(t: number, samples: number, decodeMs: number, pid = 7): StagesEvent {
  return {
    v: 1,
    type: 'stages',
    t,
    rank: 0,
    pid,
    samples,
    batches: samples / 4,
    fetchMs: decodeMs * 1.1,
    fetchCpuMs: decodeMs,
    stages: [{ kind: 'decode', name: 'decode', ms: decodeMs, calls: samples }],
  };
}

test("a block's stage totals are the difference of each process's lines across its span", () => {
  const files = [
    [line(1000, 40, 80), line(2000, 80, 160), line(3000, 120, 400)],
    [line(1500, 20, 10, 8), line(2500, 60, 50, 8)],
  ];
  const whole = stageTotalsBetween(files, null, null)!;
  assert.equal(whole.samples, 180);
  assert.equal(whole.processes, 2);
  // The block from 1.8 s to 3.2 s: each process from its last line by 1.8 s (or nothing) to its last by 3.2 s.
  const block = stageTotalsBetween(files, 1800, 3200)!;
  assert.equal(block.samples, 120 - 40 + (60 - 20));
  assert.equal(block.stages[0].ms, 400 - 80 + (50 - 10));
  assert.equal(stageTotalsBetween(files, 3500, 4000), null);
});

test('stage files are read leniently; events files are not stage files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dsa-stages-'));
  try {
    writeFileSync(
      join(dir, 'stages-12.jsonl'),
      `${JSON.stringify(line(1, 8, 4, 12))}\nnot json\n${JSON.stringify({ v: 1, type: 'stages' })}\n${JSON.stringify(line(2, 16, 9, 12))}\n{"v":1,"ty`,
    );
    writeFileSync(join(dir, 'events-0-11.jsonl'), `${JSON.stringify(line(1, 8, 4, 11))}\n`);
    const files = readStageFiles(dir);
    assert.equal(files.length, 1);
    assert.deepEqual(
      files[0].map((l) => l.samples),
      [8, 16],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the what-if names the costliest stage in a line of at most 120 characters, with an action for its kind', () => {
  const cached = { ...modeResult('cached', { iterMs: 100 }), prepStages: totals(IMAGENET_LIKE) };
  const s = prepStages({ cached, prepCpuSecPerSample: 0.0078, gpus: 1 })!;
  const advice = prepStageAdvice({ analysis: { prepStages: s } as never }, { prepStallMs: 30, computeMs: 50 })!;
  assert.equal(advice.name, 'decode');
  assert.match(
    advice.lines[0],
    /^prep: decode is 68% of prep \(4\.75 CPU-ms\/sample\): decode at lower resolution, or on the GPU$/,
  );
  assert.match(advice.lines[1], /draft.*decode_jpeg\(device='cuda'\)/);
  for (const [kind, name, action] of [
    ['transform', 'RandomResizedCrop', /move it to the GPU/],
    ['read', 'read', /faster storage/],
    ['collate', 'collate', /pinned memory/],
    ['decode', 'read+decode', /lower resolution/],
    ['transform', 'AVeryLongAugmentationClassNameOfTheUsersOwn', /move it to the GPU/],
    ['some-kind-the-job-made-up', 'x', /make it cheaper/],
  ] as const) {
    const one = { ...s, stages: [{ kind, name, msPerSample: 12.345, cpuMsPerSample: 123.456, share: 0.999 }] };
    const a = prepStageAdvice({ analysis: { prepStages: one } as never }, { prepStallMs: 30, computeMs: 50 })!;
    assert.match(a.lines[0], action);
    assert.ok(a.lines[0].length <= 120, `${a.lines[0].length}: ${a.lines[0]}`);
  }
  // No prep stall at the profiled settings: nothing to advise on prep.
  assert.equal(prepStageAdvice({ analysis: { prepStages: s } as never }, { prepStallMs: 0.1, computeMs: 50 }), null);
});
