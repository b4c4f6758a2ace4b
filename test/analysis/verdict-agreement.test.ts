// Verdicts that agree with themselves (issue 42): the split table's rows and the verdict read one decision
// (analysis/split.ts), so a stall the table names is never beside "inconclusive", stalls named together past
// STALL_THRESHOLD are never beside "compute-bound", and the bottleneck named is the largest named stall. Held across
// the stored profiles, the gate fixtures and synthetic modes; the what-if's bottleneck is its largest predicted stall.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { analyze, type ModeResults } from '../../src/analysis/split.js';
import { isNamed, STALL_THRESHOLD } from '../../src/analysis/stall-calls.js';
import { summarizeIterations } from '../../src/analysis/summarize.js';
import type { Analysis, Profile } from '../../src/schema/profile.js';
import { splitRows } from '../../src/report/summary-rows.js';
import { baseScenario, fitModel, predict, type Scenario } from '../../src/whatif/model.js';
import { modeResult } from './modes.js';
import { series } from './series.js';

const root = (path: string): string => fileURLToPath(new URL(`../../../${path}`, import.meta.url));

/** Every stored profile that parses as JSON with modes: the fixtures, the docs' example, the gate's. */
function storedProfiles(): { name: string; profile: Profile }[] {
  const dirs = ['test/fixtures/profiles', 'test/fixtures/profiles/gate'];
  const files = [
    ...dirs.flatMap((d) =>
      readdirSync(root(d))
        .filter((f) => f.endsWith('.json'))
        .map((f) => `${d}/${f}`),
    ),
    'docs/examples/train-profile.json',
  ];
  return files.flatMap((name) => {
    try {
      const profile = JSON.parse(readFileSync(root(name), 'utf8')) as Profile;
      return profile?.modes && profile.host && typeof profile.modes === 'object' ? [{ name, profile }] : [];
    } catch {
      return [];
    }
  });
}

/** The rule, on one analysis and the split table rendered from it. */
function assertAgrees(a: Analysis, profile: Profile, what: string): void {
  const rows = [
    { bound: 'prep', call: a.stallCalls?.prep, share: a.prepStallFraction },
    { bound: 'fetch', call: a.stallCalls?.fetch, share: a.fetchStallFraction },
    { bound: 'checkpoint', call: a.checkpointStall?.call, share: a.checkpointStall?.fraction ?? null },
    { bound: 'boundary', call: a.boundaryStall?.call, share: a.boundaryStall?.fraction ?? null },
  ];
  const named = rows.filter((r) => isNamed(r.call) && r.share !== null);
  const text = a.verdict.text;
  // The table's words come from the same calls: a named row shows a share, never "within noise".
  const table = splitRows({ ...profile, analysis: a });
  for (const r of named) {
    const row = table.find((cells) => cells[0].startsWith(r.bound === 'boundary' ? 'epoch-boundary' : r.bound));
    assert.ok(row && !row[2].includes('within noise'), `${what}: ${r.bound} row ${row?.join(' | ')}`);
    assert.ok(!text.startsWith('inconclusive'), `${what}: ${r.bound} stall named beside "${text}"`);
  }
  const total = named.reduce((sum, r) => sum + r.share!, 0);
  if (a.verdict.bound !== 'unknown' && total >= STALL_THRESHOLD)
    assert.ok(!text.startsWith('compute-bound'), `${what}: stalls of ${total} named beside "${text}"`);
  const bound = rows.find((r) => r.bound === a.verdict.bound);
  if (bound) {
    assert.ok(isNamed(bound.call), `${what}: the bottleneck ${bound.bound} is named in the table`);
    for (const r of named)
      assert.ok(bound.share! >= r.share!, `${what}: bottleneck ${bound.bound} ${bound.share} < ${r.bound} ${r.share}`);
  }
}

/** The what-if's bottleneck names its largest stall, at the profiled settings and at a few asked ones. */
function assertPredictionsAgree(profile: Profile, what: string): void {
  const fit = fitModel(profile);
  if (fit.kind !== 'fitted') return;
  const model = fit.model;
  const base = baseScenario(model);
  const asked: Partial<Scenario>[] = [
    {},
    { cacheBytes: 0 },
    { cacheBytes: model.datasetBytes / 4 },
    { cacheBytes: model.datasetBytes / 2 },
    { cpus: 1 },
    { gpuSpeedup: 4 },
    { workers: 0 },
    { workers: 1 },
    { storageBytesPerSec: model.storageBytesPerSec / 4, cacheBytes: 0 },
  ];
  for (const change of asked) {
    const p = predict(model, { ...base, ...change });
    const label = `${what} ${JSON.stringify(change)}`;
    if (p.bottleneck === 'fetch') assert.ok(p.fetchStallMs >= p.prepStallMs, `${label}: fetch named, prep larger`);
    if (p.bottleneck === 'prep') assert.ok(p.prepStallMs >= p.fetchStallMs, `${label}: prep named, fetch larger`);
  }
}

test('stored profiles: the table and the verdict agree, and the what-if names its largest stall', () => {
  const profiles = storedProfiles();
  assert.ok(profiles.length >= 10, `${profiles.length} stored profiles`);
  for (const { name, profile } of profiles) {
    const a = analyze(profile.modes as ModeResults, { cpus: profile.host?.cpus });
    assertAgrees(a, profile, name);
    assertPredictionsAgree(profile, name);
  }
});

test('synthetic modes over a grid of stalls, steps and noise: the table and the verdict agree', () => {
  const profile = JSON.parse(readFileSync(root('test/fixtures/profiles/emulated-quick.json'), 'utf8')) as Profile;
  let checked = 0;
  for (const hw of [0.5, 5, 30, 80])
    for (const prep of [0, 5, 20, 60, 200])
      for (const fetch of [0, 5, 20, 60, 200])
        for (const stepGrowth of [0, 10, 60, 200]) {
          const modes = {
            synthetic: modeResult('synthetic', { iterMs: 400, halfWidth: hw }),
            cached: modeResult('cached', { iterMs: 400 + prep, computeMs: 400, halfWidth: hw }),
            cold: modeResult('cold', {
              iterMs: 400 + prep + fetch + stepGrowth,
              computeMs: 400 + stepGrowth,
              halfWidth: hw,
            }),
          };
          assertAgrees(analyze(modes), profile, `hw ${hw} prep ${prep} fetch ${fetch} step +${stepGrowth}`);
          checked++;
        }
  assert.equal(checked, 400);
});

test('synthetic series (seeded): summaries of noisy iterations give verdicts that agree with their tables', () => {
  const profile = JSON.parse(readFileSync(root('test/fixtures/profiles/emulated-quick.json'), 'utf8')) as Profile;
  for (let seed = 1; seed <= 40; seed++) {
    const cv = [0.02, 0.1, 0.3][seed % 3];
    const wait = (seed % 5) * 12;
    const step = (seed % 4) * 15;
    const mode = (name: 'synthetic' | 'cached' | 'cold', computeMs: number, waitMs: number) => {
      const iterations = series({ n: 240, seed: seed * 7 + name.length, computeMs, waitMs: () => waitMs, cv });
      const m = modeResult(name, { iterMs: 1 });
      const s = summarizeIterations(iterations, { workers: 2 })!;
      return { ...m, summary: s, ranks: [{ ...m.ranks[0], summary: s }] };
    };
    const modes = {
      synthetic: mode('synthetic', 100, 0),
      cached: mode('cached', 100, wait / 2),
      cold: mode('cold', 100 + step, wait),
    };
    assertAgrees(analyze(modes), profile, `seed ${seed} cv ${cv} wait ${wait} step +${step}`);
  }
});

test('a fetch stall of 199.2 ± 66 ms that is the step slowing is named as contention, never "inconclusive"', () => {
  // The cached mode's wait (50 ± 66 ms) leaves room for a 10% prep stall; the cold mode's step grew 200 ms, its wait
  // did not.
  const hw = 66 / Math.SQRT2;
  const modes = {
    synthetic: modeResult('synthetic', { iterMs: 800, halfWidth: hw }),
    cached: modeResult('cached', { iterMs: 850, computeMs: 800, halfWidth: hw }),
    cold: modeResult('cold', { iterMs: 1049.2, computeMs: 1000, halfWidth: hw }),
  };
  const a = analyze(modes);
  assert.equal(a.stallCalls!.fetch, 'contention');
  assert.equal(a.verdict.bound, 'fetch');
  assert.match(a.verdict.text, /^moderately fetch-bound by CPU contention: 19% of each iteration is the step running/);
  assert.match(a.advice, /The step itself is slower while the reads from storage works/);
});

test('a stall whose wait grew and whose step did not is a wait, not "step slower, no longer wait"', () => {
  // fetch stall = wait +6.8 (its own interval wide), step +0.1 ms: the total clears the margin, the wait alone not.
  const modes = {
    synthetic: modeResult('synthetic', { iterMs: 100, halfWidth: 1 }),
    cached: modeResult('cached', { iterMs: 100, halfWidth: 1 }),
    cold: modeResult('cold', { iterMs: 106.9, computeMs: 100.1, halfWidth: 1 }),
  };
  modes.cold.summary!.waitMs = { mean: 6.8, halfWidth: 8, proven: true };
  const a = analyze(modes);
  assert.equal(a.stallCalls!.fetch, 'stall');
  const row = splitRows({ modes, analysis: a } as unknown as Profile).find((r) => r[0] === 'fetch stall')!;
  assert.equal(row[2], '6%');
});
