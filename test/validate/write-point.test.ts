import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ExitCode, UserError } from '../../src/errors.js';
import { ProfileSchema, type CheckpointRecord, type ModeResult, type Profile } from '../../src/schema/profile.js';
import { planValidation } from '../../src/validate/plan.js';
import { requestedPoints } from '../../src/validate/points.js';
import { measuredWrites, stallWithinTolerance, writeHeld, writePrediction } from '../../src/validate/write-point.js';
import { fitOrFail } from '../whatif/fit-or-fail.js';

const FIXTURE = new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url);

/** The fixture with a save every `every` iterations (each `save`) in its cold mode. */
function withSaves(save: Partial<CheckpointRecord>, every = 5): Profile {
  const profile = ProfileSchema.parse(JSON.parse(readFileSync(FIXTURE, 'utf8')));
  const rank = profile.modes.cold!.ranks[0];
  rank.checkpoints = rank.iterations
    .filter((it) => (it.i + 1) % every === 0)
    .map((it) => ({
      t: it.t,
      i: it.i,
      inStep: true,
      api: 'torch.save',
      blockingMs: 60,
      syncMs: 20,
      bytes: 32e6,
      persisted: true,
      ...save,
    }));
  return profile;
}

const pace = { iterMs: 50, samplesPerSec: 160 };

test('write points come last, one per rate; a profile without saves is refused, naming the flag and the fix', () => {
  const profile = withSaves({});
  const model = fitOrFail(profile);
  const points = requestedPoints(profile, model, {
    cacheSizes: [],
    cpuCounts: [1],
    workerCounts: [],
    writeBandwidths: [20e6, 50e6],
    control: true,
  });
  assert.deepEqual(points, [
    { kind: 'control' },
    { kind: 'cpus', cpus: 1 },
    { kind: 'write', bytesPerSec: 20e6 },
    { kind: 'write', bytesPerSec: 50e6 },
  ]);
  const bare = ProfileSchema.parse(JSON.parse(readFileSync(FIXTURE, 'utf8')));
  assert.throws(
    () =>
      requestedPoints(bare, fitOrFail(bare), {
        cacheSizes: [],
        cpuCounts: [],
        workerCounts: [],
        writeBandwidths: [20e6],
        control: false,
      }),
    (e: unknown) =>
      e instanceof UserError &&
      e.exitCode === ExitCode.MissingInput &&
      /^--write-bw: the profile saw no checkpoint save .*: profile a job that saves/.test(e.message),
  );
});

test('a synced save at a rate: its part that was not syncing plus its bytes at the rate, amortised over the interval, on top of the pace', () => {
  const w = writePrediction(withSaves({}), pace, 40e6)!;
  assert.equal(w.synced, true);
  assert.equal(w.bytesPerSave, 32e6);
  // 60 ms a save, 20 of them fsync: 40 ms + 32 MB at 40 MB/s (800 ms).
  assert.ok(Math.abs(w.perSaveMs - 840) < 1e-9, String(w.perSaveMs));
  assert.ok(Math.abs(w.stallMsPerIter - 168) < 1e-9, String(w.stallMsPerIter));
  assert.ok(Math.abs(w.iterMs - (50 + 168)) < 1e-9, String(w.iterMs));
  assert.ok(Math.abs(w.samplesPerSec - (160 * 50) / 218) < 1e-9);
  assert.equal(
    writePrediction(ProfileSchema.parse(JSON.parse(readFileSync(FIXTURE, 'utf8'))), pace, 40e6),
    null,
    'no save, no prediction',
  );
});

test("the plan's time for a write point carries the saves at its rate", () => {
  const profile = withSaves({});
  const model = fitOrFail(profile);
  const options = {
    epochs: 2,
    maxIterations: 100,
    datasetFiles: profile.dataset.files,
    samplesPerIter: profile.modes.cached!.summary!.samplesPerIter,
  };
  const [control, slow] = planValidation(
    profile,
    model,
    [{ kind: 'control' }, { kind: 'write', bytesPerSec: 10e6 }],
    options,
  );
  // 3.2 s a save every 5 iterations: 640 ms more an iteration than the control.
  const perIteration = (slow.estimatedSec - control.estimatedSec) / control.iterations;
  assert.ok(Math.abs(perIteration - 0.64) < 0.05, String(perIteration));
});

test("a run's checkpoint stall by the profile's arithmetic: mean save over the interval", () => {
  const profile = withSaves({ blockingMs: 900, syncMs: 860 });
  const run: ModeResult = { ...profile.modes.cold!, mode: 'cached' };
  const m = measuredWrites(run);
  assert.equal(m.perSaveMs, 900);
  assert.equal(m.stallMsPerIter, 180);
  assert.ok(m.saves > 3);
  const none = measuredWrites({ ...run, ranks: run.ranks.map((r) => ({ ...r, checkpoints: [] })) });
  assert.deepEqual(none, { stallMsPerIter: null, perSaveMs: null, saves: 0 });
});

test('the stall is judged within 15% of itself, or 3% of the iteration for a small one', () => {
  assert.equal(stallWithinTolerance(176.8, 169.3, 223), true);
  assert.equal(stallWithinTolerance(200, 169.3, 223), false, '18% off');
  // 2 ms against 1 ms is 100% off, but 1 ms of a 60 ms iteration is under its 3%.
  assert.equal(stallWithinTolerance(2, 1, 60), true);
  assert.equal(stallWithinTolerance(10, 1, 60), false);
  assert.equal(stallWithinTolerance(10, null, 60), null);
});

test('a synced save faster than its bytes at the rate was not held; buffered saves cannot tell', () => {
  const synced = writePrediction(withSaves({}), pace, 40e6)!;
  const ran = (perSaveMs: number | null) => ({
    perSaveMs,
    stallMsPerIter: perSaveMs === null ? null : perSaveMs / 5,
    saves: 10,
  });
  assert.equal(writeHeld(synced, ran(850), 40e6), true);
  assert.equal(writeHeld(synced, ran(61), 40e6), false, 'tmpfs: 32 MB in 61 ms');
  assert.equal(writeHeld(synced, ran(null), 40e6), null);
  const buffered = writePrediction(withSaves({ syncMs: 0 }), pace, 40e6)!;
  assert.equal(buffered.synced, false);
  assert.equal(writeHeld(buffered, ran(61), 40e6), null);
});
