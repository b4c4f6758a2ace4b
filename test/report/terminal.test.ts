import { test } from 'node:test';
import { summarizeIterations } from '../../src/analysis/summarize.js';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { readProfile } from '../../src/store/profile-store.js';
import { analyze } from '../../src/analysis/split.js';
import { renderSummary } from '../../src/report/terminal.js';

const FIXTURE = fileURLToPath(new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url));

test('the summary shows each mode, the split with its CI, the verdict and the advice', () => {
  const profile = readProfile(FIXTURE);
  const text = renderSummary(profile, 'profiles/x.json');
  for (const mode of ['synthetic', 'cached', 'cold'])
    assert.match(text, new RegExp(`^${mode}\\s+\\d+\\.\\d ± \\d+\\.\\d`, 'm'));
  assert.match(text, /^compute\s+\d+\.\d ± \d+\.\d\s+\d+%$/m);
  assert.match(text, /^prep stall\s+\d+\.\d ± \d+\.\d\s+\d+%$/m);
  assert.match(text, /^fetch stall\s+\d+\.\d ± \d+\.\d\s+\d+%$/m);
  assert.match(text, /^verdict: /m);
  assert.match(text, /^advice: /m);
  assert.doesNotMatch(text, /UNPROVEN|NaN|undefined/);
});

test("with the later epochs known, the verdict says it is the first epoch's and the epochs 2+ have their own line", async () => {
  const { laterEpochs } = await import('../../src/whatif/later-epochs.js');
  const profile = readProfile(FIXTURE);
  profile.dataset.memoryBudgetBytes = 10 * 2 ** 30;
  profile.laterEpochs = laterEpochs(profile);
  const text = renderSummary(profile, '/tmp/p.json');
  assert.match(text, /^verdict, first epoch \(the dataset cold\): highly fetch-bound/m);
  assert.match(
    text,
    /^verdict, epochs 2\+: .*prep-bound: \d+% of each iteration waits on CPU pre-processing, at the cached pace/m,
  );
  assert.doesNotMatch(text, /^verdict: /m);
});

test('an unproven cold mode is flagged, its figures marked ~, and the reason given', () => {
  const profile = readProfile(FIXTURE);
  const cold = profile.modes.cold!;
  cold.state = {
    ...cold.state,
    proven: false,
    reason: 'only 40.0% of consumed bytes read from storage: part of the data came from a cache',
  };
  profile.analysis = analyze(profile.modes);
  const text = renderSummary(profile, 'profiles/x.json');
  assert.match(text, /^cold .*UNPROVEN: only 40\.0% of consumed bytes/m);
  assert.match(text, /^fetch stall\s+~\d/m);
  assert.match(text, /^compute\s+\d/m, 'compute does not rest on the cold mode');
  assert.match(text, /caveats:\n {2}- .*cold/);
});

test('a multi-rank profile labels its rates per rank and shows the ranks together', () => {
  const profile = readProfile(FIXTURE);
  assert.doesNotMatch(renderSummary(profile, 'p.json'), /per rank|all ranks together/, 'one rank: plain samples/s');
  for (const mode of ['synthetic', 'cached', 'cold'] as const) {
    const m = profile.modes[mode]!;
    m.ranks = [m.ranks[0], { ...m.ranks[0], rank: 1, pid: m.ranks[0].pid + 1 }];
  }
  const text = renderSummary(profile, 'p.json');
  assert.match(text, /samples\/s per rank/);
  const sum = (mode: 'synthetic' | 'cached' | 'cold') =>
    (2 * profile.modes[mode]!.ranks[0].summary!.samplesPerSec).toFixed(1);
  assert.match(
    text,
    new RegExp(
      `all ranks together, samples/s: synthetic ${sum('synthetic')} · cached ${sum('cached')} · cold ${sum('cold')}`,
    ),
  );
});

test("a multi-rank profile shows each rank's wait and step, and the straggler the analysis named", () => {
  const profile = readProfile(FIXTURE);
  assert.doesNotMatch(renderSummary(profile, 'p.json'), /^ranks \(/m, 'one rank: no per-rank table');
  for (const mode of ['synthetic', 'cached', 'cold'] as const) {
    const m = profile.modes[mode]!;
    const slower = m.ranks[0].iterations.map((it) => ({ ...it, waitMs: it.waitMs + 20 }));
    const summary = summarizeIterations(slower, { workers: m.ranks[0].workers });
    m.ranks = [m.ranks[0], { ...m.ranks[0], rank: 1, pid: m.ranks[0].pid + 1, iterations: slower, summary }];
  }
  profile.analysis = analyze(profile.modes);
  const text = renderSummary(profile, 'p.json');
  assert.match(text, /^ranks \(cold\)\s+iteration ms\s+wait ms\s+wait p50 \/ p95 \/ p99 ms\s+step ms/m);
  assert.match(text, /^rank 0 .*\n^rank 1 .*<- straggler \(prep\)$/m);
  assert.match(text, /^straggler: rank 1 \(local rank 1.*\) is the straggler: in the cold mode it waits/m);
});

test('the overlap probe is shown with its proof, and an unproven one is said to be unused', () => {
  const profile = readProfile(FIXTURE);
  const cold = profile.modes.cold!;
  profile.overlapProbe = {
    ...cold,
    residentShare: 0.5,
    state: { ...cold.state, proven: true, reason: '50.0% resident before the run (planned 50.0%)' },
  };
  assert.match(
    renderSummary(profile, 'p.json'),
    /^overlap probe: cold with 50% of the dataset held resident: \d+\.\d ± \d+\.\d ms per iteration; proven: .*whatif fits the overlap/m,
  );
  profile.overlapProbe.state = { ...profile.overlapProbe.state, proven: false, reason: 'held part evicted' };
  assert.match(renderSummary(profile, 'p.json'), /UNPROVEN: held part evicted \(whatif does not use it\)/);
});

test('the GPUs table: each GPU a row, each mode its mean utilisation, peak memory and samples; none without GPU samples', () => {
  const profile = readProfile(FIXTURE);
  assert.doesNotMatch(renderSummary(profile, 'p.json'), /GPUs \(nvidia-smi\)/, 'no GPU, no table');
  const reading = (u0: number, u1: number, mem: number) => [
    { index: 0, utilPct: u0, memBytes: mem },
    { index: 1, utilPct: u1, memBytes: null },
  ];
  const cold = profile.modes.cold!;
  cold.resources = cold.resources
    .slice(0, 3)
    .map((s, i) => ({ ...s, gpus: reading(20 + 10 * i, 90, (1 + i) * 2 ** 30) }));
  const text = renderSummary(profile, 'p.json');
  // GPU 0: utilisation 20, 30, 40 (mean 30), memory 1, 2, 3 GiB (peak 3); GPU 1 reports no memory.
  assert.match(text, /^GPU 0\s+—\s+—\s+30% · peak 3\.0 GiB \(3\)$/m);
  assert.match(text, /^GPU 1\s+—\s+—\s+90% · memory — \(3\)$/m);
});

test('a profile from before per-GPU samples gets one row of the mean over GPUs', () => {
  const profile = readProfile(FIXTURE);
  const cached = profile.modes.cached!;
  cached.resources = cached.resources
    .slice(0, 2)
    .map((s, i) => ({ ...s, gpuUtilPct: 50 + 20 * i, gpuMemBytes: 2 ** 30 }));
  assert.match(
    renderSummary(profile, 'p.json'),
    /^all GPUs \(mean, memory summed\)\s+—\s+60% · peak 1\.0 GiB \(2\)\s+—$/m,
  );
});
