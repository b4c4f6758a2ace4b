import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { AnalysisSchema } from '../../src/schema/profile.js';
import { analyze } from '../../src/analysis/split.js';
import { modeResult, three } from './modes.js';

const close = (a: number | null, b: number, tol = 1e-9) =>
  assert.ok(a !== null && Math.abs(a - b) <= tol, `${a} vs ${b}`);

test('split with known inputs: stalls, combined half-widths, fractions, rates', () => {
  const a = analyze({
    synthetic: modeResult('synthetic', { iterMs: 100, halfWidth: 2, jobCpuSecPerSample: 0.001 }),
    cached: modeResult('cached', {
      iterMs: 150,
      computeMs: 104,
      halfWidth: 3,
      jobCpuSecPerSample: 0.011,
      consumedBytes: 601 * 32 * 100_000,
    }),
    cold: modeResult('cold', { iterMs: 500, computeMs: 104, halfWidth: 4, storageReadBytesPerSec: 6.4e6 }),
  });
  AnalysisSchema.parse(a);
  assert.deepEqual(a.computeMs, { mean: 100, halfWidth: 2, proven: true });
  assert.equal(a.prepStallMs!.mean, 50);
  close(a.prepStallMs!.halfWidth, Math.sqrt(13));
  assert.equal(a.fetchStallMs!.mean, 350);
  close(a.fetchStallMs!.halfWidth, 5);
  assert.deepEqual(a.iterMs, { mean: 500, halfWidth: 4, proven: true });
  close(a.prepStallFraction, 0.1);
  close(a.fetchStallFraction, 0.7);
  close(a.gpuSamplesPerSec, 320);
  close(a.prepSamplesPerSec, 32 / 0.15);
  close(a.coldSamplesPerSec, 64);
  assert.equal(a.storageReadBytesPerSec, 6.4e6);
  // 100 kB per sample at 213.3 samples/s.
  close(a.memoryReadBytesPerSec, (32 / 0.15) * 100_000, 1e-3);
  close(a.prepCpuSecPerSample, 0.01);
  assert.deepEqual(a.verdict.bound, 'fetch');
  assert.equal(a.verdict.severity, 'highly');
  assert.match(a.verdict.text, /^highly fetch-bound: 70% of each iteration waits on storage, 10% on CPU/);
  assert.match(a.advice, /6\.4 MB\/s/);
  assert.deepEqual(a.caveats, []);
});

test('a step that takes longer in the cached mode than in the synthetic mode is named in a caveat', () => {
  const modes = three(100, 150, 400);
  modes.cached = modeResult('cached', { iterMs: 150, computeMs: 125, halfWidth: 2 });
  modes.cold = modeResult('cold', { iterMs: 400, computeMs: 125, halfWidth: 2 });
  const a = analyze(modes);
  assert.equal(a.prepStallMs!.mean, 50, 'the split itself is unchanged');
  assert.equal(a.caveats.length, 1);
  assert.match(
    a.caveats[0],
    /step itself took 100\.0 ms in the synthetic mode and 125\.0 ms in the cached mode \(\+25\.0 ms\)/,
  );
  // Within the combined noise, or under 10% of the step: no caveat.
  modes.cached = modeResult('cached', { iterMs: 150, computeMs: 125, halfWidth: 30 });
  assert.deepEqual(analyze(modes).caveats, []);
  modes.cached = modeResult('cached', { iterMs: 150, computeMs: 108, halfWidth: 1 });
  modes.cold = modeResult('cold', { iterMs: 400, computeMs: 108, halfWidth: 1 });
  assert.deepEqual(analyze(modes).caveats, []);
});

test('a fetch stall that is mostly a slower step, not a longer wait, says so', () => {
  // The ImageNet example trained on 2 CPU cores: cold 120 ms slower per iteration, its wait 2 ms longer.
  const modes = three(880, 940, 1060);
  modes.cached = modeResult('cached', { iterMs: 940, computeMs: 938.6, halfWidth: 10 });
  modes.cold = modeResult('cold', { iterMs: 1060, computeMs: 1056.9, halfWidth: 10 });
  const a = analyze(modes);
  assert.equal(a.fetchStallMs!.mean, 120, 'the split itself is unchanged');
  const caveat = a.caveats.find((c) => c.includes('fetch stall includes'));
  assert.ok(caveat, a.caveats.join('\n'));
  assert.match(
    caveat,
    /938\.6 ms in the cached mode and 1056\.9 ms in the cold mode \(\+118\.3 ms\): the fetch stall includes this difference; the wait for data grew by 1\.7 ms per iteration/,
  );
  assert.match(caveat, /an accelerator would not feel it/);
});

test("the profiler's own CPU is named when it reaches a tenth of a CPU in a mode", () => {
  const modes = three(100, 150, 400);
  modes.cached!.profilerCpuSec = 1.2; // 2% of the 60 s mode
  modes.cold!.profilerCpuSec = 9; // 15%
  modes.cold!.state = {
    ...modes.cold!.state,
    reEvictions: 1000,
    keeper: { mechanism: 'scan', cpuSec: 8.4, cpuShare: 0.14, fallbackReason: 'inotify watch limit too low' },
  };
  assert.match(
    analyze(modes).caveats.join('\n'),
    /the profiler itself used 15% of a CPU in the cold mode \(keeping the dataset evicted, by rescanning every file: 14% of a CPU; scanning because inotify watch limit too low\), 2% in the cached mode/,
  );
  modes.cold!.profilerCpuSec = 3; // 5%: not worth a caveat
  assert.deepEqual(analyze(modes).caveats, []);
});

test('a mode stopped by the user reads "interrupted" once', () => {
  const modes = three(100, 150, 400);
  modes.cold = modeResult('cold', { iterMs: 400, computeMs: 100, status: 'interrupted', stopReason: 'interrupted' });
  assert.match(analyze(modes).caveats.join('\n'), /cold mode ended early \(interrupted\): its figures/);
});

test('stalls are clamped at 0 when a slower mode measures faster', () => {
  const a = analyze(three(100, 95, 90));
  assert.equal(a.prepStallMs!.mean, 0);
  assert.equal(a.fetchStallMs!.mean, 0);
  close(a.prepStallMs!.halfWidth, Math.SQRT2);
  assert.equal(a.prepStallFraction, 0);
  assert.equal(a.verdict.bound, 'compute');
  assert.equal(a.verdict.severity, null);
  assert.match(a.advice, /keeps up/);
  assert.match(
    a.caveats.join('\n'),
    /the cold mode measured faster than the cached mode beyond noise \(90\.0 vs 95\.0 ms per iteration\): the fetch stall is taken as 0, so the shares/,
  );
  // Within the noise, the clamp is just the zero it reads: no caveat.
  assert.doesNotMatch(analyze(three(100, 99.5, 99)).caveats.join('\n'), /measured faster/);
  assert.match(a.caveats.join('\n'), /the cached mode measured faster than the synthetic mode/);
});

test('an unproven mode marks every estimate built on it and adds a caveat with its reason', () => {
  const modes = three(100, 150, 400);
  modes.cold = modeResult('cold', {
    iterMs: 400,
    computeMs: 100,
    proven: false,
    reason: 'read only 12% of consumed bytes from storage',
  });
  const a = analyze(modes);
  assert.equal(a.computeMs!.proven, true);
  assert.equal(a.prepStallMs!.proven, true);
  assert.equal(a.fetchStallMs!.proven, false);
  assert.equal(a.iterMs!.proven, false);
  assert.equal(a.caveats.length, 1);
  assert.match(a.caveats[0], /cold mode.*not proven.*read only 12% of consumed bytes/);
  assert.match(a.verdict.text, /unproven/);

  const cachedUnproven = three(100, 150, 400);
  cachedUnproven.cached = modeResult('cached', { iterMs: 150, proven: false, reason: 'dataset larger than memory' });
  const b = analyze(cachedUnproven);
  assert.equal(b.prepStallMs!.proven, false);
  assert.equal(b.fetchStallMs!.proven, false);
  assert.equal(b.computeMs!.proven, true);
  assert.match(b.caveats.join('\n'), /cached mode.*dataset larger than memory/);
});

test('missing modes: null figures, a caveat per mode, unknown verdict', () => {
  const { synthetic, cached } = three(100, 160, 0);
  const a = analyze({ synthetic, cached });
  AnalysisSchema.parse(a);
  assert.equal(a.fetchStallMs, null);
  assert.equal(a.fetchStallFraction, null);
  assert.equal(a.coldSamplesPerSec, null);
  assert.equal(a.storageReadBytesPerSec, null);
  // Without cold, fractions are of the slowest mode measured (cached).
  assert.equal(a.iterMs!.mean, 160);
  close(a.prepStallFraction, 60 / 160);
  assert.equal(a.verdict.bound, 'unknown');
  assert.equal(a.verdict.severity, null);
  assert.match(a.verdict.text, /missing: cold/);
  assert.match(a.advice, /cold/);
  assert.deepEqual(a.caveats.length, 1);
  assert.match(a.caveats[0], /no cold mode/);

  const none = analyze({});
  AnalysisSchema.parse(none);
  assert.equal(none.computeMs, null);
  assert.equal(none.iterMs, null);
  assert.equal(none.verdict.bound, 'unknown');
  assert.equal(none.caveats.length, 3);
});

test('a partial mode with a summary is used with a caveat; without one it counts as missing', () => {
  const modes = three(100, 150, 400);
  modes.cold = modeResult('cold', { iterMs: 400, computeMs: 100, status: 'interrupted', stopReason: 'interrupted' });
  const a = analyze(modes);
  assert.equal(a.fetchStallMs!.mean, 250);
  assert.equal(a.verdict.bound, 'fetch');
  assert.match(a.caveats.join('\n'), /cold mode ended early \(interrupted/);

  modes.cold = modeResult('cold', { iterMs: 400, status: 'failed', stopReason: 'job-failed', noSummary: true });
  const b = analyze(modes);
  assert.equal(b.fetchStallMs, null);
  assert.equal(b.verdict.bound, 'unknown');
  assert.match(b.caveats.join('\n'), /cold mode has too few measured iterations \(failed/);
});

test('verdict thresholds', () => {
  // [synthetic, cached, cold, half-width] -> bound, severity
  const cases: [number, number, number, number, string, string | null][] = [
    [100, 100, 100, 1, 'compute', null],
    [100, 104, 109, 1, 'compute', null], // 9% stall in total
    [100, 105, 111.2, 1, 'fetch', 'moderately'], // 10.1%: 5.6% fetch > 4.5% prep
    [100, 180, 200, 1, 'prep', 'moderately'], // prep 40%, fetch 10%
    [100, 200, 200, 1, 'prep', 'highly'], // prep exactly 50%
    [100, 110, 400, 1, 'fetch', 'highly'],
    [100, 150, 200, 1, 'prep', 'moderately'], // a tie goes to prep (cheaper to fix)
    // A 30% prep stall whose CI includes 0 is not a bottleneck, nor ruled out: inconclusive.
    [100, 130, 130, 30, 'unknown', null],
    // The same stall, measured tightly, is.
    [100, 130, 130, 5, 'prep', 'moderately'],
  ];
  for (const [s, c, k, hw, bound, severity] of cases) {
    const a = analyze(three(s, c, k, hw));
    assert.equal(a.verdict.bound, bound, `${s}/${c}/${k} +-${hw}: ${a.verdict.text}`);
    assert.equal(a.verdict.severity, severity, `${s}/${c}/${k} +-${hw}: ${a.verdict.text}`);
  }
});

test('verdict and advice text interpolate the measured numbers', () => {
  const modes = three(100, 260, 260);
  modes.synthetic = modeResult('synthetic', { iterMs: 100, jobCpuSecPerSample: 0.002 });
  modes.cached = modeResult('cached', { iterMs: 260, computeMs: 100, jobCpuSecPerSample: 0.032 });
  const a = analyze(modes);
  assert.equal(a.verdict.text, 'highly prep-bound: 62% of each iteration waits on CPU pre-processing');
  // 0.03 CPU-s per sample x 320 samples/s = 9.6 cores.
  assert.match(a.advice, /9\.6 CPU cores/);
  assert.match(a.advice, /DALI/);
  assert.doesNotMatch(a.advice, /num_workers/, 'the host is not known: no claim about workers and CPUs');
  // The same job's 2 workers on a 16-CPU host: num_workers is named first; on 2 CPUs it is not.
  const onSixteen = analyze(modes, { cpus: 16 });
  assert.match(
    onSixteen.advice,
    /^Raise num_workers first: 2 loader workers per rank \(2 in all\) pre-process on at most 2 of the job's 16 CPUs/,
  );
  assert.doesNotMatch(analyze(modes, { cpus: 2 }).advice, /num_workers/);
  // Stalls of 2 ms in a 104 ms iteration do not clear the 2% margin: within noise, and said so.
  const compute = analyze(three(100, 102, 104));
  assert.equal(compute.verdict.text, 'compute-bound: the data stalls are within noise of zero');
  assert.deepEqual(compute.stallCalls, { prep: 'within-noise', fetch: 'within-noise' });
  // 4 ms each in 108 clear it, yet together stay under the 10% that makes a job data-bound.
  const small = analyze(three(100, 104, 108));
  assert.equal(small.verdict.text, 'compute-bound: data stalls take 7% of each iteration');
  assert.deepEqual(small.stallCalls, { prep: 'stall', fetch: 'stall' });
});

test('memory read rate sums the ranks of the cached mode', () => {
  const modes = three(100, 100, 100);
  const cached = modeResult('cached', { iterMs: 100, consumedBytes: 2 * 601 * 32 * 1000 });
  // Two ranks, each 320 samples/s, together 2 x 601 x 32 samples of 1000 bytes.
  cached.ranks = [cached.ranks[0], { ...cached.ranks[0], rank: 1, pid: 101 }];
  cached.state.consumedSamples = 2 * 601 * 32;
  modes.cached = cached;
  close(analyze(modes).memoryReadBytesPerSec, 640 * 1000, 1e-6);
  modes.cached = modeResult('cached', { iterMs: 100, consumedBytes: 0 });
  assert.equal(analyze(modes).memoryReadBytesPerSec, null);
});

test('a byte count estimated from the mean file size needs the cold mode to confirm it before a memory rate is shown', () => {
  // torchvision's MNIST: 4 files of up to 47 MB, 60,000 samples held in memory; no bytes reported.
  const modes = three(13.7, 23.0, 23.3);
  const cached = modeResult('cached', { iterMs: 23.0 });
  cached.state = { ...cached.state, consumedBytes: 601 * 32 * 13e6 };
  modes.cached = cached;
  modes.cold!.state = { ...modes.cold!.state, readFraction: 0 };
  const a = analyze(modes);
  assert.equal(a.memoryReadBytesPerSec, null);
  assert.match(
    a.caveats.join('\n'),
    /memory read rate not shown: .*the cold mode read 0\.0% of that estimate from storage, which does not confirm it/,
  );
  // The cold mode read about what was estimated: the estimate holds.
  modes.cold!.state = { ...modes.cold!.state, readFraction: 1.02 };
  assert.ok(analyze(modes).memoryReadBytesPerSec! > 0);
});

test("prep CPU per sample that does not exceed the synthetic mode's is not measurable: null and a caveat, not 0", () => {
  const modes = three(100, 150, 150);
  modes.synthetic = modeResult('synthetic', { iterMs: 100, jobCpuSecPerSample: 0.02 });
  modes.cached = modeResult('cached', { iterMs: 150, computeMs: 100, jobCpuSecPerSample: 0.01 });
  const a = analyze(modes);
  assert.equal(a.prepCpuSecPerSample, null);
  assert.deepEqual(a.caveats, [
    "prep CPU per sample not measurable: the cached mode used 10.00 CPU-ms per sample, no more than the synthetic mode's 20.00",
  ]);
});

test('property: any three modes give a schema-valid, self-consistent analysis', () => {
  const ms = fc.double({ min: 0.1, max: 1e5, noNaN: true });
  const hw = fc.option(fc.double({ min: 0, max: 1e3, noNaN: true }));
  fc.assert(
    fc.property(ms, ms, ms, hw, hw, hw, fc.boolean(), (s, c, k, hs, hc, hk, proven) => {
      const a = analyze({
        synthetic: modeResult('synthetic', { iterMs: s, halfWidth: hs }),
        // The step as in the synthetic mode: what is added is the wait for data.
        cached: modeResult('cached', { iterMs: c, halfWidth: hc, proven, computeMs: Math.min(s, c) }),
        cold: modeResult('cold', { iterMs: k, halfWidth: hk, computeMs: Math.min(s, k) }),
      });
      AnalysisSchema.parse(a);
      assert.ok(a.prepStallMs!.mean >= 0 && a.fetchStallMs!.mean >= 0);
      assert.ok(a.prepStallFraction! <= 1 && a.fetchStallFraction! <= 1);
      assert.equal(a.prepStallMs!.proven, proven);
      assert.equal(a.fetchStallMs!.proven, proven);
      // Independent restatement of the rule: stalls that clear 2% of the cold iteration only, 10% and 50% thresholds.
      // A stall is named from its wait growth, or from its total when that clears and its step did not grow more
      // than its wait (then contention: named too, as the table names it); nothing named and room for a 10% wait
      // within the noise: inconclusive.
      const hw = (x: number | null, y: number | null) => (x === null || y === null ? 0 : Math.hypot(x, y));
      const clears = (w: { mean: number; hw: number }) => w.mean - w.hw > 0.02 * k;
      const stall = (before: number, after: number, hb: number | null, ha: number | null, stepGrowth: number) => {
        const wait = { mean: after - before - stepGrowth, hw: hw(hb, ha) };
        const total = { mean: Math.max(0, after - before), hw: hw(hb, ha) };
        const named = clears(wait) || clears(total);
        return { wait, named, share: named ? Math.min(1, Math.max(0, after - before) / k) : 0 };
      };
      const prep = stall(s, c, hs, hc, Math.min(s, c) - s);
      const fetch = stall(c, k, hc, hk, Math.min(s, k) - Math.min(s, c));
      const p = prep.share;
      const f = fetch.share;
      const room = [prep, fetch]
        .filter((x) => !x.named)
        .reduce((sum, x) => sum + Math.max(0, x.wait.mean + x.wait.hw), 0);
      const anyNamed = prep.named || fetch.named;
      const bound = p + f < 0.1 ? (!anyNamed && room >= 0.1 * k ? 'unknown' : 'compute') : f > p ? 'fetch' : 'prep';
      assert.equal(a.verdict.bound, bound);
      assert.equal(
        a.verdict.severity,
        bound === 'compute' || bound === 'unknown' ? null : Math.max(p, f) >= 0.5 ? 'highly' : 'moderately',
      );
    }),
    { numRuns: 300 },
  );
});

test('advice speaks of the whole job: with two ranks in lockstep, the accelerators consume twice the storage rate one does', () => {
  const one = three(100, 150, 400);
  one.cold = modeResult('cold', {
    iterMs: 400,
    computeMs: 100,
    storageReadBytesPerSec: 6.4e6,
    consumedBytes: 601 * 32 * 100_000,
  });
  const single = analyze(one);
  const two = structuredClone(one);
  for (const mode of ['synthetic', 'cached', 'cold'] as const) {
    const m = two[mode]!;
    m.ranks = [m.ranks[0], { ...m.ranks[0], rank: 1, pid: 101 }];
    m.state = { ...m.state, consumedBytes: 2 * m.state.consumedBytes, consumedSamples: 2 * m.state.consumedSamples! };
  }
  const double = analyze(two);
  const consume = (text: string) => Number(/could consume ([\d.]+) MB\/s/.exec(text)![1]);
  assert.ok(
    Math.abs(consume(double.advice) - 2 * consume(single.advice)) < 0.2,
    `${double.advice} vs ${single.advice}`,
  );
  assert.equal(double.gpuSamplesPerSec, single.gpuSamplesPerSec, "the profile keeps the pace-setting rank's rate");
});

test("a stall must clear the profiler's own share of a CPU in its mode before it is named", () => {
  // A 6 ms fetch stall in a 106 ms iteration clears the 2% margin...
  const modes = three(100, 100, 106, 0.5);
  assert.equal(analyze(modes).stallCalls!.fetch, 'stall');
  // ...but not the footprint of a profiler that took 8% of a CPU in the cold mode.
  modes.cold = { ...modes.cold!, profilerCpuSec: 0.08 * modes.cold!.wallSec };
  const a = analyze(modes);
  assert.equal(a.stallCalls!.fetch, 'within-noise');
  assert.equal(a.verdict.bound, 'compute');
});

test('a stalled mode stays out of the split and the verdict: unknown, with why and when it stalled', () => {
  const stalled = {
    cause: 'no-bytes' as const,
    atSec: 12,
    silentSec: 48,
    text: 'the endpoint sent nothing from 12 s into the cold block, for 48 s until the block ended, while the job waited on data',
  };
  const modes = {
    synthetic: modeResult('synthetic', { iterMs: 100, halfWidth: 2 }),
    cached: modeResult('cached', { iterMs: 150, computeMs: 104, halfWidth: 3 }),
    // Its few iterations, each waiting long, would read as a huge fetch stall.
    cold: { ...modeResult('cold', { iterMs: 5000, computeMs: 104, halfWidth: 4000, stopReason: 'timeout' }), stalled },
  };
  const a = analyze(modes);
  AnalysisSchema.parse(a);
  assert.equal(a.fetchStallMs, null, 'no fetch stall from a stalled cold mode');
  assert.equal(a.fetchStallFraction, null);
  assert.equal(a.verdict.bound, 'unknown');
  assert.match(
    a.verdict.text,
    /^unknown: the cold mode stalled \(the endpoint sent nothing from 12 s into the cold block/,
  );
  assert.ok(
    a.caveats.some((c) => /^cold mode stalled \(.*\): its figures are left out/.test(c)),
    a.caveats.join('\n'),
  );
  // The modes that held still give their split.
  assert.equal(a.prepStallMs?.mean, 50);
});
