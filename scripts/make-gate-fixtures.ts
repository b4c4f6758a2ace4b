/**
 * Regenerates the gate, compare and report fixture profiles from the recorded
 * emulated-quick.json (host, dataset, resources and state proofs are real;
 * iteration series are drawn with a seeded generator for chosen per-iteration
 * times and noise, then summarised and analysed by the real code).
 * Run: npx tsc -p tsconfig.json && node dist/scripts/make-gate-fixtures.js
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { analyze } from '../src/analysis/split.js';
import { summarizeIterations } from '../src/analysis/summarize.js';
import { readProfile, writeProfile } from '../src/store/profile-store.js';
import type { Mode } from '../src/schema/events.js';
import type { Iteration, ModeResult, Profile } from '../src/schema/profile.js';
import { mulberry32 } from '../src/random.js';

const DIR = fileURLToPath(new URL('../../test/fixtures/profiles/', import.meta.url));
const SOURCE = readProfile(DIR + 'emulated-quick.json');

/** Per-mode targets: mean wait and compute per iteration (ms) and relative jitter of the wait. */
interface ModeSpec {
  waitMs: number;
  computeMs: number;
  jitter: number;
  iterations: number;
}

function series(spec: ModeSpec, startedAt: number, seed: number): Iteration[] {
  const random = mulberry32(seed);
  const out: Iteration[] = [];
  let t = startedAt + 500;
  for (let i = 0; i < spec.iterations; i++) {
    // Warm-up: the first iterations wait for the loader to start.
    const warm = i < 3 ? 150 / (i + 1) : 0;
    const waitMs = Math.max(0, spec.waitMs * (1 + spec.jitter * (2 * random() - 1))) + warm;
    const computeMs = spec.computeMs * (1 + 0.04 * (2 * random() - 1));
    t += waitMs;
    out.push({ i, t, waitMs, computeMs, samples: 4, bytes: 4 * 266415 });
    t += computeMs;
  }
  return out;
}

function withMode(source: ModeResult, spec: ModeSpec, seed: number): ModeResult {
  const iterations = series(spec, source.startedAt, seed);
  const rank = { ...source.ranks[0], iterations, summary: summarizeIterations(iterations, { workers: 2 }) };
  return { ...source, ranks: [rank], paceRank: 0, summary: rank.summary };
}

function make(
  name: string,
  specs: Record<Mode, ModeSpec>,
  tweak: (p: Profile) => void = () => undefined,
  seed = 1,
): Profile {
  const p: Profile = structuredClone(SOURCE);
  p.jobName = name;
  for (const mode of ['synthetic', 'cached', 'cold'] as const)
    p.modes[mode] = withMode(SOURCE.modes[mode]!, specs[mode], seed * 10 + mode.length);
  tweak(p);
  p.analysis = analyze(p.modes);
  writeProfile(DIR + `gate/${name}.json`, p);
  const a = p.analysis!;
  const pct = (x: number | null) => (x === null ? '-' : (x * 100).toFixed(1) + '%');
  console.log(
    name.padEnd(22),
    `iter ${a.iterMs?.mean.toFixed(2)} ± ${a.iterMs?.halfWidth?.toFixed(2)}`,
    `prep ${pct(a.prepStallFraction)} fetch ${pct(a.fetchStallFraction)}`,
    `cold ${a.coldSamplesPerSec?.toFixed(1)}/s`,
  );
  return p;
}

const quiet = (waitMs: number, computeMs = 10.5, iterations = 120): ModeSpec => ({
  waitMs,
  computeMs,
  jitter: 0.05,
  iterations,
});

// Compute-bound: every budget of the test config holds.
make('pass', { synthetic: quiet(0.02), cached: quiet(0.5), cold: quiet(1.0) });
// The same job, re-measured: +1% iteration time, well inside a 5% budget.
make('pass-rerun', { synthetic: quiet(0.02), cached: quiet(0.5), cold: quiet(1.1) }, undefined, 2);
// Fetch-bound: storage stalls 80% of the iteration; prep small.
make('fetch-bound', { synthetic: quiet(0.02), cached: quiet(1.0), cold: quiet(47) });
// Prep-bound: CPU pre-processing stalls ~60%; fetch small.
make('prep-bound', { synthetic: quiet(0.02), cached: quiet(16), cold: quiet(16.6) });
// Slower than 'pass' by ~25% per iteration, measured tightly: a regression beyond noise.
make('regressed', { synthetic: quiet(0.02), cached: quiet(0.5), cold: quiet(3.9) }, undefined, 3);
// Slower than 'pass' by ~8%, but so noisy (few iterations, large jitter) that it is within noise.
make(
  'regressed-noisy',
  {
    synthetic: quiet(0.02),
    cached: quiet(0.5),
    cold: { waitMs: 1.9, computeMs: 10.5, jitter: 1, iterations: 30 },
  },
  (p) => {
    // Bursty delivery: every 7th iteration waits 4x longer.
    const it = p.modes.cold!.ranks[0].iterations;
    for (const x of it) if (x.i % 7 === 3) x.waitMs *= 4;
    const s = summarizeIterations(it, { workers: 2 });
    p.modes.cold!.ranks[0].summary = s;
    p.modes.cold!.summary = s;
  },
  4,
);
// Compute-bound but the cold mode's state was not proven.
make('unproven-cold', { synthetic: quiet(0.02), cached: quiet(0.5), cold: quiet(1.0) }, (p) => {
  p.modes.cold!.state = {
    ...p.modes.cold!.state,
    proven: false,
    reason: 'only 40.0% of consumed bytes read from storage: part of the data came from a cache',
    readFraction: 0.4,
  };
});
// The job failed in cold mode (a partial profile).
make('job-failed', { synthetic: quiet(0.02), cached: quiet(0.5), cold: quiet(1.0, 10.5, 8) }, (p) => {
  Object.assign(p.modes.cold!, { status: 'failed', stopReason: 'job-failed', jobExitCode: 1 });
  p.status = 'partial';
});

// Hostile: markup in every string a report shows, absurd but finite numbers.
const hostileName =
  '</script><script>window.pwned=1</script><img src=x onerror="window.pwned=2"> | *x* `y` [z](javascript:alert(1))';
make('hostile', { synthetic: quiet(0.02), cached: quiet(0.5), cold: quiet(1e150) }, (p) => {
  p.command = ['python', hostileName];
  p.host.hostname = '<b>host</b>';
  p.host.cpuModel = '"><svg onload=alert(1)>';
  p.warnings = [hostileName];
  for (const r of p.modes.cold!.resources) {
    r.diskReadBytesPerSec = 1.7e308;
    r.pageCacheBytes = 1e300;
  }
  p.modes.cold!.state.reason = hostileName;
});
const hostile = JSON.parse(readFileSync(DIR + 'gate/hostile.json', 'utf8')) as Profile;
hostile.jobName = hostileName;
writeFileSync(DIR + 'gate/hostile.json', JSON.stringify(hostile, null, 1) + '\n');

// Files that must be refused with a clear error.
const base = readFileSync(DIR + 'gate/pass.json', 'utf8');
writeFileSync(DIR + 'gate/wrong-schema-version.json', base.replace('"schemaVersion": 1', '"schemaVersion": 99'));
const missing = JSON.parse(base) as Record<string, unknown>;
delete missing.host;
writeFileSync(DIR + 'gate/missing-fields.json', JSON.stringify(missing, null, 1) + '\n');
// JSON.parse turns 1e999 into Infinity, which the schema refuses.
writeFileSync(DIR + 'gate/huge-number.json', base.replace(/"samplesPerSec": [0-9.e+-]+/, '"samplesPerSec": 1e999'));
writeFileSync(DIR + 'gate/not-json.json', base.slice(0, 500));
