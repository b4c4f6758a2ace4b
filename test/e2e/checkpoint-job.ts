import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ExitCode } from '../../src/errors.js';
import type { Profile } from '../../src/schema/profile.js';
import { readProfile } from '../../src/store/profile-store.js';
import { FIXTURES, PYTHON, startCli } from './helpers.js';

/**
 * A real PyTorch loop with checkpoint saves (test/fixtures/checkpoint-train.py: a DataLoader over real files, a
 * 50 ms emulated step, torch.save of a state dict), profiled by the real CLI: shared by the files that time its
 * saves (checkpoints.test.ts, alone) and that check where they go (checkpoint-writes.test.ts, side by side).
 */
export const SCRIPT = join(FIXTURES, 'checkpoint-train.py');
export const quick = ['--precision', '8%', '--min-iterations', '30', '--max-iterations', '150', '--single-pass'];

/** 160 files of 64 KiB under `data`: 20 batches of 8 an epoch. */
export function writeCheckpointData(data: string): void {
  mkdirSync(data, { recursive: true });
  for (let i = 0; i < 160; i++) writeFileSync(join(data, `f${String(i).padStart(4, '0')}.bin`), Buffer.alloc(65536, i));
}

/** Profiles the script on `data` in `work/name` (its meter there too); fails the test unless the CLI ends well. */
export async function profileCheckpointJob(
  work: string,
  data: string,
  name: string,
  jobArgs: string[],
  extra: string[] = [],
  env: Record<string, string> = {},
): Promise<Profile> {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  const out = join(dir, 'profile.json');
  const args = ['profile', '--data', data, '--out', out, ...quick, ...extra, '--', PYTHON, SCRIPT, '--data', data];
  const result = await startCli([...args, '--meter', join(dir, 'meter.json'), ...jobArgs], { cwd: dir, env });
  assert.equal(result.exitCode, ExitCode.Ok, result.all);
  assert.doesNotMatch(result.all, /^\s+at .+\(.+:\d+:\d+\)$/m, 'no stack trace');
  return readProfile(out);
}
