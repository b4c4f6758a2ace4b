import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { profileCheckpointJob, writeCheckpointData } from './checkpoint-job.js';
import { torchMissing } from './helpers.js';

/**
 * The epoch boundary stall of a real PyTorch loop (checkpoint-job.ts): its time to the first batch against the
 * script's own stamp in the same launch, and persistent workers against restarted ones, each an order of magnitude
 * apart. No figure is held against a run outside the profile, so this file runs side by side (scripts/test-plan.ts).
 */
const work = mkdtempSync(join(tmpdir(), 'dsa-e2e-ckpt-boundary-'));
const data = join(work, 'data');

let skipReason: string | null = null;
before(async () => {
  skipReason = await torchMissing();
  if (skipReason) return;
  writeCheckpointData(data);
});

const readMeter = (path: string): { firstBatch: number[] } => JSON.parse(readFileSync(path, 'utf8'));

function profile(name: string, jobArgs: string[], extra: string[] = [], env: Record<string, string> = {}) {
  return profileCheckpointJob(work, data, name, jobArgs, extra, env);
}

test('workers started again each epoch are the boundary stall; persistent workers remove it; the first batch matches the script', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const slowStart = { WORKER_START_SEC: '0.3' };
  // The restarting job's iteration time (a 0.3 s stall every 20 iterations) never meets --precision: each mode
  // runs to its budget. 60 iterations hold three epochs a mode, enough to prove the stall (150: 3x the job's time).
  const restarting = await profile('restarting', ['--workers', '2'], ['--max-iterations', '60'], slowStart);
  const b = restarting.analysis!.boundaryStall!;
  assert.ok(b, 'the boundary stall was measured');
  assert.equal(b.persistentWorkers, false);
  assert.equal(b.basis, 'later-epochs');
  assert.equal(b.call, 'stall', b.text);
  // 0.3 s of worker start each epoch over 20 iterations of ~50 ms: the largest stall.
  assert.ok(b.perEpochMs.mean > 250, `per epoch ${b.perEpochMs.mean}`);
  assert.equal(restarting.analysis!.verdict.bound, 'boundary', restarting.analysis!.verdict.text);
  assert.match(restarting.analysis!.advice, /persistent_workers=True/);
  // The time to the first batch against the script's own stamp (iter(loader) to the first batch), same epoch.
  const meter = readMeter(join(work, 'restarting', 'meter.json'));
  const epochs = restarting.modes.cold!.ranks[0].epochs!;
  // One launch: the cold block's first epoch is one of the launch's, and the script stamps every epoch.
  const first = epochs[0].createMs + epochs[0].firstWaitMs;
  const scriptFirst = 1000 * meter.firstBatch[epochs[0].epoch];
  assert.ok(
    Math.abs(first - scriptFirst) <= 0.1 * scriptFirst,
    `first batch of epoch ${epochs[0].epoch}: ${first} vs script ${scriptFirst} ms`,
  );

  const persistent = await profile('persistent', ['--workers', '2', '--persistent'], [], slowStart);
  const kept = persistent.analysis!.boundaryStall!;
  assert.equal(kept.persistentWorkers, true);
  assert.notEqual(kept.call, 'stall', kept.text);
  assert.ok(
    kept.perEpochMs.mean < 0.25 * b.perEpochMs.mean,
    `persistent ${kept.perEpochMs.mean} vs ${b.perEpochMs.mean} ms an epoch`,
  );
  assert.notEqual(persistent.analysis!.verdict.bound, 'boundary');
});
