import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { planRuns, runBudget, runProfile, type ProfileRunInput } from '../../src/profile/run-profile.js';
import { MODES } from '../../src/schema/events.js';
import type { Profile } from '../../src/schema/profile.js';
import { summarizeIterations } from '../../src/analysis/summarize.js';
import { fakeModeRunner, fakeProfileInput, type FakeJob } from './fake-mode-runner.js';
import { FakeDataSource } from '../support/fake-data-source.js';
import { ExitCode, UserError } from '../../src/errors.js';
import { MemorySink } from '../support/memory-sink.js';
import { laterEpochs } from '../../src/whatif/later-epochs.js';
import { ProfileBook } from '../../src/profile/profile-book.js';

test("the schedule mirrors the modes and halves each run's budget", () => {
  const plan = planRuns({ modes: [...MODES], cpuSweep: [1] }, 2);
  assert.deepEqual(
    plan.map((r) => r.label),
    ['synthetic', 'cached', 'cold', 'cold-2', 'cached-2', 'synthetic-2', 'cached-1cpu'],
  );
  assert.deepEqual(
    plan.map((r) => r.budgetShare),
    [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 1],
  );
  assert.deepEqual(
    planRuns({ modes: ['cached', 'cold'] }, 1).map((r) => r.label),
    ['cached', 'cold'],
  );
  const half = runBudget({ precision: 0.05, minIterations: 50, maxIterations: 2000 }, 0.5);
  assert.deepEqual(
    { ...half, precision: Number(half.precision.toFixed(4)) },
    { precision: 0.0707, minIterations: 25, maxIterations: 1000, minStopBlocks: 5 },
  );
  assert.equal(runBudget({ precision: 0.05, minIterations: 50, maxIterations: 2000 }, 1).minStopBlocks, 10);
});

test('a workers sweep sits beside the cached mode in each pass, mirrored like the modes', () => {
  const plan = planRuns({ modes: [...MODES], workersSweep: [1, 4] }, 2);
  assert.deepEqual(
    plan.map((r) => r.label),
    [
      'synthetic',
      'cached',
      'cached-1workers',
      'cached-4workers',
      'cold',
      'cold-2',
      'cached-4workers-2',
      'cached-1workers-2',
      'cached-2',
      'synthetic-2',
    ],
  );
  assert.deepEqual(
    plan.map((r) => r.workers),
    [null, null, 1, 4, null, null, 4, 1, null, null],
  );
  assert.ok(plan.every((r) => r.budgetShare === 0.5));
  // Without the cached mode the sweep ends the first pass and opens the second.
  assert.deepEqual(
    planRuns({ modes: ['cold'], workersSweep: [3] }, 2).map((r) => r.label),
    ['cold', 'cached-3workers', 'cached-3workers-2', 'cold-2'],
  );
});

// The same pace in every mode: no stall at all, only a machine that slows down.
const DRIFT_ONLY: FakeJob = {
  waitMs: { synthetic: 0, cached: 0, cold: 0 },
  stepMs: { synthetic: 100, cached: 100, cold: 100 },
  // 0.1% slower every second: about 20% over the profile, as this machine drifted (0.95 to 1.16 s in 4 minutes).
  driftPerSec: 0.001,
  noise: 0.03,
  startupSec: 5,
  seed: 7,
};

// Known stalls: prep 30 ms (wait), fetch 50 ms of which 10 ms is a slower step (contention).
const KNOWN_STALLS: FakeJob = {
  waitMs: { synthetic: 0, cached: 30, cold: 70 },
  stepMs: { synthetic: 100, cached: 100, cold: 110 },
  driftPerSec: 0.001,
  noise: 0.03,
  startupSec: 5,
  seed: 11,
};

describe('runProfile with a fake mode runner', () => {
  // Never made: the profiles go to a memory sink, the fake runner starts no job.
  const dir = path.join(os.tmpdir(), `dsa-schedule-unwritten-${process.pid}`);
  const sink = new MemorySink();
  const inputFor = (
    name: string,
    runner: ProfileRunInput['modeRunner'],
    overrides: Partial<ProfileRunInput> = {},
  ): ProfileRunInput => fakeProfileInput(dir, name, runner, { sink, ...overrides });

  const profileWith = async (
    job: FakeJob,
    passes: number,
    name: string,
  ): Promise<{ profile: Profile; labels: string[]; budgets: number[] }> => {
    const fake = fakeModeRunner(job);
    const input = inputFor(name, fake.run, { passes });
    const outcome = await runProfile(input, { onSignal: () => () => {} });
    return {
      profile: outcome.profile,
      labels: fake.calls.map((c) => c.label),
      budgets: fake.calls.map((c) => c.maxIterations),
    };
  };

  test('a machine whose pace drifts gets no stall with the mirrored schedule, and a phantom one without it', async () => {
    const { profile, labels, budgets } = await profileWith(DRIFT_ONLY, 2, 'drift');
    assert.deepEqual(labels, ['synthetic', 'cached', 'cold', 'cold-2', 'cached-2', 'synthetic-2']);
    assert.deepEqual(budgets, [200, 200, 200, 200, 200, 200], 'the same total iterations as one pass of 400');
    assert.deepEqual(
      profile.source,
      { kind: 'files', fetchesFrom: 'storage', roots: ['/fake/data'], dropCaches: false },
      'the source recorded itself',
    );
    const a = profile.analysis!;
    assert.deepEqual(a.stallCalls, { prep: 'within-noise', fetch: 'within-noise' });
    assert.equal(a.verdict.bound, 'compute');
    assert.match(a.verdict.text, /within noise/);
    assert.match(a.advice, /nothing to change in data loading/);
    // The drift is reported: every mode's second run slower than its first, and the fitted slope near the truth
    // (6%/min).
    assert.ok(a.drift, 'drift reported');
    for (const m of a.drift.modes) assert.ok(m.secondMs > m.firstMs, `${m.mode}: ${m.firstMs} then ${m.secondMs}`);
    assert.ok(Math.abs(a.drift.slopePctPerMin! - 6) < 1.5, `slope ${a.drift.slopePctPerMin}%/min`);
    assert.equal(profile.modes.cold!.passes!.length, 2);
    assert.equal(
      profile.modes.cold!.summary!.measuredIterations,
      profile.modes.cold!.passes!.reduce((s, p) => s + p.measuredIterations, 0),
    );

    // The control: the same machine, one run per mode, turns the drift into stalls.
    const single = (await profileWith(DRIFT_ONLY, 1, 'drift-single')).profile.analysis!;
    assert.notEqual(single.stallCalls!.fetch, 'within-noise', 'one pass reads the drift as a fetch stall');
    assert.ok(single.fetchStallMs!.mean > 3, `${single.fetchStallMs!.mean}`);
    assert.equal(single.drift, null);
  });

  test('a job with known stalls gets them back, with the step growth named apart from the wait growth', async () => {
    const { profile } = await profileWith(KNOWN_STALLS, 2, 'known');
    const a = profile.analysis!;
    // The pace at the profile's middle is about 1.1x that of time 0, so the true stalls are 1.1x the set ones.
    const scale = profile.modes.synthetic!.summary!.iterMs.mean / 100;
    const within = (e: { mean: number; halfWidth: number | null }, truth: number) =>
      assert.ok(
        Math.abs(e.mean - truth) <= Math.max(e.halfWidth ?? 0, 0.03 * truth),
        `${e.mean.toFixed(2)} ± ${e.halfWidth?.toFixed(2)} vs ${truth.toFixed(2)}`,
      );
    within(a.prepStallMs!, 30 * scale);
    within(a.fetchStallMs!, 50 * scale);
    assert.deepEqual(a.stallCalls, { prep: 'stall', fetch: 'stall' });
    assert.equal(a.verdict.bound, 'fetch');
    within(a.fetchStallParts!.stepGrowthMs, 10 * scale);
    within(a.fetchStallParts!.waitGrowthMs, 40 * scale);
    within(a.prepStallParts!.stepGrowthMs, 0.001);
  });

  test('a step that slows beside the loader while the wait does not grow is contention, not a wait for data', async () => {
    // A CPU-trained job: its loader's workers share the cores, so the step runs 15% slower in the
    // cached and cold modes; it waits no longer for data (its own data meter reads a few ms throughout).
    const cpuTrained: FakeJob = {
      ...DRIFT_ONLY,
      waitMs: { synthetic: 0, cached: 2, cold: 2 },
      stepMs: { synthetic: 100, cached: 115, cold: 115 },
      seed: 5,
    };
    const a = (await profileWith(cpuTrained, 2, 'contention')).profile.analysis!;
    assert.deepEqual(a.stallCalls, { prep: 'contention', fetch: 'within-noise' });
    // Named in the table past 10% of the iteration, so named by the verdict too, as contention (issue 42).
    assert.equal(a.verdict.bound, 'prep');
    assert.match(
      a.verdict.text,
      /^moderately prep-bound by CPU contention: 1[2-5]% of each iteration is the step running [\d.]+ ms slower beside the loader, not a longer wait for data/,
    );
    assert.match(a.advice, /fewer loader workers or cheaper transforms/);
    // The stall keeps counting the slower step.
    assert.ok(a.prepStallMs!.mean > 14, `${a.prepStallMs!.mean}`);
  });

  /** A fake runner whose k-th run has its waits and steps scaled: a machine whose load changes from run to run. */
  const jumpyRunner = (job: FakeJob, waitFactors: number[], stepFactors: number[]) => {
    const fake = fakeModeRunner(job);
    return async (input: Parameters<typeof fake.run>[0]) => {
      const result = await fake.run(input);
      const k = fake.calls.length - 1;
      for (const rank of result.ranks)
        for (const it of rank.iterations) {
          it.waitMs *= waitFactors[k];
          it.computeMs *= stepFactors[k];
        }
      result.summary = summarizeIterations(result.ranks[0].iterations, { workers: 2 });
      result.ranks[0].summary = result.summary;
      return result;
    };
  };
  test('profile --workers pools each count over its mirrored runs and records what the job ran', async () => {
    // Prep-bound at the script's 2 workers (30 ms wait); 1 worker waits 130 ms, 4 workers keep up.
    const job: FakeJob = { ...KNOWN_STALLS, waitMsAtWorkers: { 1: 130, 4: 0 }, seed: 3 };
    const fake = fakeModeRunner(job);
    const input = inputFor('workers', fake.run, { passes: 2, workersSweep: [1, 4] });
    const { profile } = await runProfile(input, { onSignal: () => () => {} });
    const sweep = profile.workersSweep!;
    assert.deepEqual(
      sweep.map((r) => r.workersAsked),
      [1, 4],
    );
    assert.deepEqual(
      sweep.map((r) => r.passes!.map((p) => p.label)),
      [
        ['cached-1workers', 'cached-1workers-2'],
        ['cached-4workers', 'cached-4workers-2'],
      ],
    );
    assert.deepEqual(
      sweep.map((r) => r.ranks[0].workers),
      [1, 4],
    );
    assert.deepEqual(
      sweep.map((r) => r.ranks[0].loader?.scriptWorkers),
      [2, 2],
    );
    const scale = profile.modes.synthetic!.summary!.iterMs.mean / 100;
    const waits = sweep.map((r) => r.summary!.waitMs.mean / scale);
    assert.ok(Math.abs(waits[0] - 130) < 5 && waits[1] < 1, `waits ${waits.map((w) => w.toFixed(1))}`);
    // The modes themselves are the script's own setting, pooled apart from the sweep.
    assert.equal(profile.modes.cached!.ranks[0].workers, 2);
    assert.equal(profile.modes.cached!.passes!.length, 2);
    assert.ok(Math.abs(profile.modes.cached!.summary!.waitMs.mean / scale - 30) < 3);
  });

  test('a job that cannot change its workers gets no sweep, and says why, instead of a faked one', async () => {
    const fake = fakeModeRunner({ ...KNOWN_STALLS, ignoresWorkers: true, seed: 4 });
    const warnings: string[] = [];
    const input = inputFor('workers-refused', fake.run, { passes: 2, workersSweep: [1, 4] });
    const { profile, exitCode } = await runProfile(input, {
      onSignal: () => () => {},
      onWarning: (w) => warnings.push(w),
    });
    assert.equal(exitCode, 0);
    assert.equal(profile.workersSweep, undefined);
    assert.deepEqual(
      fake.calls.map((c) => c.label),
      ['synthetic', 'cached', 'cached-1workers', 'cold', 'cold-2', 'cached-2', 'synthetic-2'],
    );
    assert.ok(
      warnings.some((w) => /workers sweep skipped: the job did not apply DSA_NUM_WORKERS=1/.test(w)),
      warnings.join('\n'),
    );
    assert.ok(profile.analysis, 'the modes are still analysed');
  });

  test('a fake data source drives a whole profile: listed once, each run in its state, the cold runs under its throttle', async () => {
    const fake = fakeModeRunner({ ...KNOWN_STALLS, seed: 6 });
    const source = new FakeDataSource({ files: 300, fileBytes: 4096 });
    const warnings: string[] = [];
    const input = inputFor('fake-source', fake.run, { dataSource: source, storageBwBytesPerSec: 5e6 });
    const saves = sink.profileSaves.length;
    const { profile, exitCode } = await runProfile(input, {
      onSignal: () => () => {},
      onWarning: (w) => warnings.push(w),
    });
    assert.equal(exitCode, ExitCode.Ok);
    // Saved after each run and once at the end, as the file would be; the last save is the profile returned.
    assert.deepEqual(sink.profileSaves.slice(saves), Array(fake.calls.length + 1).fill(input.outFile));
    assert.deepEqual(sink.profile(input.outFile), JSON.parse(JSON.stringify(profile)));
    assert.equal(source.listed, 1);
    assert.deepEqual(
      { files: profile.dataset.files, bytes: profile.dataset.bytes, device: profile.dataset.device },
      { files: 300, bytes: 300 * 4096, device: '254:0' },
    );
    // Every run set up its mode's state from the source and undid it.
    assert.deepEqual(
      source.modeState.prepared.map((p) => [p.mode, p.finished]),
      fake.calls.map((c) => [c.mode, true]),
    );
    assert.deepEqual(source.throttles, [{ name: String(process.pid), bytesPerSec: 5e6, removed: true }]);
    for (const call of fake.calls)
      assert.equal(call.argv[0] === 'throttled', call.mode === 'cold', `${call.label}: ${call.argv.join(' ')}`);
    assert.equal(profile.storageProbe, undefined, 'no storage probe under a throttle');
    assert.equal(profile.analysis?.verdict.bound, 'fetch');

    // A dataset the source cannot throttle: refused before any run, not profiled unthrottled.
    const unthrottleable = fakeModeRunner(KNOWN_STALLS);
    const refused = runProfile(
      inputFor('no-device', unthrottleable.run, {
        dataSource: new FakeDataSource({ device: null }),
        storageBwBytesPerSec: 5e6,
      }),
      { onSignal: () => () => {} },
    );
    await assert.rejects(
      refused,
      (error: unknown) => error instanceof UserError && error.exitCode === ExitCode.Environment,
    );
    assert.equal(unthrottleable.calls.length, 0);
  });

  test("the book tells the epochs after the first again on request: a prediction follows the storage probe's bandwidth", () => {
    // A job that fetches every sample (no cache of its own): its later epochs are predicted, from the network probe's
    // bandwidth.
    const fixture = JSON.parse(
      fs.readFileSync(new URL('../../../test/fixtures/profiles/remote-latency.json', import.meta.url), 'utf8'),
    ) as Profile;
    const probe = fixture.storageProbe!;
    const book = new ProfileBook({ ...fixture, storageProbe: undefined }, '/fake/later.json', new MemorySink());
    book.refreshLaterEpochs();
    const before = book.profile.laterEpochs!;
    assert.equal(before.basis, 'predicted');
    book.profile.storageProbe = probe;
    book.refreshLaterEpochs();
    assert.notEqual(book.profile.laterEpochs!.iterMs.mean, before.iterMs.mean, 'the probe moves the prediction');
    assert.deepEqual(book.profile.laterEpochs, laterEpochs(book.profile));
  });

  const profileWithRunner = async (modeRunner: ProfileRunInput['modeRunner'], name: string): Promise<Profile> =>
    (await runProfile(inputFor(name, modeRunner), { onSignal: () => () => {} })).profile;

  test('a prep stall whose wait jumps between runs (a machine whose load changed) is still named from its wait', async () => {
    // The cached wait 125 ms in one run and 80 in the other: a machine whose load changed by a fifth.
    const prepBound: FakeJob = {
      ...DRIFT_ONLY,
      driftPerSec: 0,
      waitMs: { synthetic: 0.3, cached: 100, cold: 110 },
      stepMs: { synthetic: 100, cached: 100, cold: 100 },
      seed: 9,
    };
    const a = (
      await profileWithRunner(jumpyRunner(prepBound, [1, 1.25, 1, 1, 0.8, 1], [1, 1, 1, 1, 1, 1]), 'prep-jumpy')
    ).analysis!;
    assert.equal(a.stallCalls!.prep, 'stall', JSON.stringify([a.prepStallParts, a.drift, a.prepStallMs]));
    assert.equal(a.verdict.bound, 'prep', a.verdict.text);
    // As measured here with other work starting mid-profile (155 ms, then 62): too wide to size the
    // stall, and said so; never "compute-bound, nothing to change".
    const wild = (
      await profileWithRunner(jumpyRunner(prepBound, [1, 1.5, 1, 1, 0.6, 1], [1, 1, 1, 1, 1, 1]), 'prep-wild')
    ).analysis!;
    assert.notEqual(wild.verdict.bound, 'compute', wild.verdict.text);
  });

  test('the jitter of a wait near zero is not lent to a mode that waits', async () => {
    // As profiled here: the synthetic wait 0.4 ms in one run and 0.1 in the other, the cold wait 77 ms in both.
    const fetchBound: FakeJob = {
      ...KNOWN_STALLS,
      driftPerSec: 0,
      waitMs: { synthetic: 0.25, cached: 20, cold: 77 },
      stepMs: { synthetic: 10, cached: 10, cold: 10 },
      seed: 2,
    };
    const a = (
      await profileWithRunner(jumpyRunner(fetchBound, [1.6, 1, 1, 1, 1, 0.4], [1, 1, 1, 1, 1, 1]), 'near-zero-wait')
    ).analysis!;
    assert.ok(a.fetchStallParts!.waitGrowthMs.halfWidth! < 5, JSON.stringify(a.fetchStallParts));
    assert.deepEqual(a.stallCalls, { prep: 'stall', fetch: 'stall' });
    assert.equal(a.verdict.bound, 'fetch');
  });

  test('no stall named, but a wait too noisy to rule one out: inconclusive, not compute-bound', async () => {
    const smallWait: FakeJob = {
      ...DRIFT_ONLY,
      driftPerSec: 0,
      waitMs: { synthetic: 0, cached: 8, cold: 8 },
      stepMs: { synthetic: 100, cached: 100, cold: 100 },
      seed: 4,
    };
    const a = (
      await profileWithRunner(jumpyRunner(smallWait, [1, 3, 0.1, 2.5, 0.2, 1], [1, 1, 1, 1, 1, 1]), 'inconclusive')
    ).analysis!;
    assert.notEqual(a.stallCalls!.prep, 'stall');
    assert.equal(a.verdict.bound, 'unknown');
    assert.match(
      a.verdict.text,
      /^inconclusive: no data stall stands out of the noise, but the noise leaves room for one of up to \d+% of each iteration/,
    );
    assert.match(a.advice, /quieter/);
  });

  test('the intervals hold the scatter between runs, not only the noise inside each', async () => {
    // A machine that jumps between two paces from run to run, not steadily.
    const jumpy = jumpyRunner(
      { ...DRIFT_ONLY, driftPerSec: 0, noise: 0.01, seed: 3 },
      [1, 1, 1, 1, 1, 1],
      [1, 1.08, 0.95, 1.06, 0.97, 1.04],
    );
    const outcome = await runProfile(inputFor('jumpy', jumpy), { onSignal: () => () => {} });
    const a = outcome.profile.analysis!;
    const cold = outcome.profile.modes.cold!;
    const inRun = Math.hypot(...cold.passes!.map((p) => p.iterMs!.halfWidth!)) / 2;
    assert.ok(
      cold.summary!.iterMs.halfWidth! > 2 * inRun,
      `pooled ±${cold.summary!.iterMs.halfWidth} vs in-run ±${inRun}`,
    );
    assert.ok(a.drift!.runToRunPct! > 2, `run-to-run ${a.drift!.runToRunPct}%`);
    // The wait has its own scatter: a job that never waits is not given the step's.
    assert.ok(
      a.prepStallParts!.waitGrowthMs.halfWidth! < 0.5,
      `wait growth ±${a.prepStallParts!.waitGrowthMs.halfWidth}`,
    );
    assert.ok(
      a.prepStallParts!.stepGrowthMs.halfWidth! > 5,
      `step growth ±${a.prepStallParts!.stepGrowthMs.halfWidth}`,
    );
    assert.equal(a.verdict.bound, 'compute', a.verdict.text);
  });

  test('no file was written: every profile went to the memory sink', () => {
    assert.ok(sink.profileSaves.length > 0);
    assert.equal(fs.existsSync(dir), false);
  });
});
