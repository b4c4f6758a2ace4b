import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readProfile } from '../../src/store/profile-store.js';
import { ExitCode } from '../../src/errors.js';
import { profileCheckpointJob, quick, SCRIPT, writeCheckpointData } from './checkpoint-job.js';
import { PYTHON, startCli, torchMissing } from './helpers.js';

/**
 * Where a real PyTorch loop's checkpoint saves go and what the tool says of a writer it cannot see
 * (checkpoint-job.ts): files and bytes, no timing, so this file runs side by side (scripts/test-plan.ts).
 */
const work = mkdtempSync(join(tmpdir(), 'dsa-e2e-ckpt-writes-'));
const data = join(work, 'data');

let skipReason: string | null = null;
before(async () => {
  skipReason = await torchMissing();
  if (skipReason) return;
  writeCheckpointData(data);
});

test("the synthetic mode leaves the script's checkpoint alone: saves go to scratch files, removed", async (t) => {
  if (skipReason) return t.skip(skipReason);
  const dir = join(work, 'synthetic-only');
  mkdirSync(dir, { recursive: true });
  const target = join(dir, 'checkpoint.pt');
  writeFileSync(target, 'the real checkpoint');
  const out = join(dir, 'profile.json');
  const result = await startCli(
    [
      'profile',
      '--data',
      data,
      '--out',
      out,
      '--modes',
      'synthetic',
      ...quick,
      '--',
      PYTHON,
      SCRIPT,
      '--data',
      data,
      '--save-every',
      '5',
      '--save-mb',
      '8',
      '--save-path',
      target,
    ],
    { cwd: dir },
  );
  assert.equal(result.exitCode, ExitCode.Ok, result.all);
  assert.equal(readFileSync(target, 'utf8'), 'the real checkpoint');
  assert.deepEqual(
    readdirSync(dir).filter((f) => f.includes('dsa-scratch')),
    [],
    'no scratch file left',
  );
  const saves = readProfile(out).modes.synthetic!.ranks[0].checkpoints!;
  assert.ok(saves.length >= 5 && saves.every((s) => !s.persisted && s.bytes! > 8e6), JSON.stringify(saves.slice(0, 2)));
});

test("a writer the hook cannot see (os.write + fsync) is named from the job tree's write_bytes", async (t) => {
  if (skipReason) return t.skip(skipReason);
  const p = await profileCheckpointJob(work, data, 'raw-writer', [
    '--save-every',
    '5',
    '--save-mb',
    '16',
    '--writer',
    'raw',
  ]);
  assert.equal(p.analysis!.checkpointStall, null);
  const caveat = p.analysis!.caveats.find((c) => /no save the hook knows was seen/.test(c));
  assert.ok(caveat, p.analysis!.caveats.join('\n'));
  // 16 MiB every 5 iterations: about 3.4 MB an iteration.
  const perIter = Number(/wrote ([\d.]+) MiB per iteration/.exec(caveat)?.[1]);
  assert.ok(perIter > 2.5 && perIter < 4.5, caveat);
  assert.ok(existsSync(join(work, 'raw-writer', 'checkpoint.pt')));
});
