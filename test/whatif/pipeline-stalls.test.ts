import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ProfileSchema, type CheckpointRecord, type EpochRecord, type Profile } from '../../src/schema/profile.js';
import { PipelineWhatifSchema } from '../../src/schema/whatif-output.js';
import { pipelineWhatif } from '../../src/whatif/pipeline-stalls.js';

const FIXTURE = new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url);

/** The fixture with saves every `every` iterations (each `save`) in its cold mode, and epoch starts when given. */
function withSaves(
  save: Partial<CheckpointRecord>,
  every = 5,
  epochs?: Partial<EpochRecord> & { length: number; persistent: boolean },
): Profile {
  const profile = ProfileSchema.parse(JSON.parse(readFileSync(FIXTURE, 'utf8')));
  const cold = profile.modes.cold!;
  const rank = cold.ranks[0];
  rank.checkpoints = rank.iterations
    .filter((it) => (it.i + 1) % every === 0)
    .map((it) => ({
      t: it.t,
      i: it.i,
      inStep: true,
      api: 'torch.save',
      blockingMs: 150,
      syncMs: 0,
      bytes: 128e6,
      persisted: true,
      ...save,
    }));
  if (epochs) {
    rank.epochs = [0, 1, 2].map((epoch) => ({
      t: 0,
      epoch,
      i: epoch * epochs.length,
      createMs: epochs.createMs ?? 0,
      firstWaitMs: epochs.firstWaitMs ?? 0,
      epochIterations: epochs.length,
      workers: 2,
      persistentWorkers: epochs.persistent,
    }));
    rank.loader = { workers: 2, prefetchFactor: 2, persistentWorkers: epochs.persistent };
  }
  return profile;
}

const pace = { iterMs: 100, samplesPerSec: 40 };

test('buffered saves: unchanged while writeback drains a save within the interval, held to the bandwidth beyond', () => {
  const profile = withSaves({ syncMs: 0 });
  const fast = pipelineWhatif(profile, { writeBytesPerSec: 1e9 }, pace, pace)!;
  PipelineWhatifSchema.parse(fast);
  // 128 MB at 1 GB/s is 128 ms, well within 5 x 100 ms: the page cache takes the save as measured.
  assert.equal(fast.checkpoint!.asked.perSaveMs, 150);
  assert.equal(fast.checkpoint!.asked.stallMsPerIter, 30);
  // At 100 MB/s writeback needs 1280 ms against 500 ms of steps: 780 ms more each save.
  const slow = pipelineWhatif(profile, { writeBytesPerSec: 100e6 }, pace, pace)!;
  assert.ok(Math.abs(slow.checkpoint!.asked.perSaveMs - 930) < 1e-6, String(slow.checkpoint!.asked.perSaveMs));
  assert.ok(slow.checkpoint!.assumptions.some((a) => /no fsync/.test(a)));
  // Saving every 20 iterations gives writeback 2 s: the save is back to what the page cache costs.
  const sparse = pipelineWhatif(profile, { writeBytesPerSec: 100e6, checkpointEvery: 20 }, pace, pace)!;
  assert.equal(sparse.checkpoint!.asked.perSaveMs, 150);
  assert.equal(sparse.checkpoint!.asked.stallMsPerIter, 7.5);
});

test('synced saves: what was not syncing, plus the bytes at the asked bandwidth', () => {
  const profile = withSaves({ blockingMs: 400, syncMs: 300 });
  const r = pipelineWhatif(profile, { writeBytesPerSec: 64e6 }, pace, pace)!;
  assert.equal(r.checkpoint!.profiled.synced, true);
  assert.equal(r.checkpoint!.asked.perSaveMs, 100 + 2000);
  assert.equal(r.checkpoint!.asked.stallMsPerIter, 420);
  // CheckFreq: 2100 ms a save within 3.5% of 100 ms steps needs 600 iterations between saves.
  assert.equal(r.checkpoint!.everyForBudget, 600);
  assert.equal(r.baseline.iterMs, 180);
  assert.equal(r.prediction.iterMs, 520);
  assert.ok(Math.abs(r.prediction.samplesPerSec - (40 * 100) / 520) < 1e-9);
});

test('async saves block for the staging; a background write longer than the interval waits for the next save', () => {
  const profile = withSaves({ blockingMs: 400, syncMs: 300 });
  const covered = pipelineWhatif(profile, { saveMode: 'async' }, pace, pace)!;
  assert.equal(covered.checkpoint!.asked.saveMode, 'async');
  // The write (300 ms as measured) fits in 5 x 100 ms: only the 100 ms of staging blocks.
  assert.equal(covered.checkpoint!.asked.perSaveMs, 100);
  assert.ok(covered.checkpoint!.assumptions.some((a) => /staging/.test(a)));
  const behind = pipelineWhatif(profile, { saveMode: 'async', writeBytesPerSec: 100e6 }, pace, pace)!;
  assert.equal(behind.checkpoint!.asked.perSaveMs, 100 + 1280 - 500);
});

test("failures a day: the work redone at the interval, and Young's interval", () => {
  const r = pipelineWhatif(withSaves({ blockingMs: 200 }), { failuresPerDay: 24, checkpointEvery: 100 }, pace, pace)!;
  const f = r.checkpoint!.failures!;
  // One failure an hour loses half of (100 x 100 ms + 200 ms) = 5.1 s.
  assert.ok(Math.abs(f.lostShare - 5.1 / 3600) < 1e-9, String(f.lostShare));
  // sqrt(2 x 200 ms x 3600 s) = 37.9 s = 379 iterations of 100 ms.
  assert.equal(f.bestEveryIterations, 379);
  assert.ok(Math.abs(r.checkpoint!.lostWorkPerFailureSec - 5.1) < 1e-9);
});

test('persistent workers: an epoch start shrinks to the refill of one batch; prefetch_factor does not change it', () => {
  const profile = withSaves({}, 5, { length: 100, persistent: false, createMs: 900, firstWaitMs: 400 });
  const r = pipelineWhatif(profile, { persistentWorkers: true }, pace, pace)!;
  const b = r.boundary!;
  assert.equal(b.profiled.persistentWorkers, false);
  assert.ok(b.profiled.perEpochMs > 1000, String(b.profiled.perEpochMs));
  // One batch of 4 samples at the fixture's 14.4 ms of prep CPU each: 57 ms, less than the 400 ms measured first wait.
  assert.ok(Math.abs(b.asked.perEpochMs - 4 * 14.363344615707518) < 0.01, String(b.asked.perEpochMs));
  assert.equal(b.line, 'DataLoader(..., persistent_workers=True)');
  const prefetch = pipelineWhatif(profile, { prefetchFactor: 8 }, pace, pace)!.boundary!;
  assert.equal(prefetch.asked.perEpochMs, prefetch.profiled.perEpochMs);
  assert.equal(prefetch.line, 'DataLoader(..., prefetch_factor=8)');
  assert.ok(prefetch.assumptions.some((a) => /prefetch_factor/.test(a)));
});

test('saves at each epoch end: another interval is said to be a change to the script', () => {
  const profile = withSaves({ inStep: false }, 5, { length: 100, persistent: true });
  const cold = profile.modes.cold!.ranks[0];
  // One save at the end of each of the first two epochs.
  cold.checkpoints = [100, 200].map((i) => ({
    t: 0,
    i,
    inStep: false,
    api: 'torch.save',
    blockingMs: 150,
    syncMs: 0,
    bytes: 128e6,
    persisted: true,
  }));
  const r = pipelineWhatif(profile, { checkpointEvery: 1000 }, pace, pace)!;
  assert.equal(r.checkpoint!.profiled.everyIterations, 100);
  assert.ok(
    r.checkpoint!.assumptions.some((a) => /saves at each epoch's end \(every 100 iterations\)/.test(a)),
    r.checkpoint!.assumptions.join('\n'),
  );
  assert.ok(!pipelineWhatif(profile, {}, pace, pace)!.checkpoint!.assumptions.some((a) => /epoch's end/.test(a)));
});

test('--checkpoint-every on a profile with no saves is not ignored without a word: a caveat names the flag', async () => {
  const { whatif } = await import('../../src/whatif/whatif.js');
  const stored = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Profile;
  const r = whatif(stored, 'p.json', {}, {}, { checkpointEvery: 500, writeBytesPerSec: 2e8 });
  assert.ok(!('kind' in r && r.kind === 'not-enough-data'));
  const caveats = (r as { caveats: string[] }).caveats;
  assert.ok(
    caveats.some((c) => /^--checkpoint-every, --write-bw asked, but the profile saw no checkpoint save/.test(c)),
    caveats.join('\n'),
  );
  const plain = whatif(stored, 'p.json', {}) as { caveats: string[] };
  assert.ok(!plain.caveats.some((c) => c.includes('no checkpoint save')));
});
