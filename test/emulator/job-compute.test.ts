import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { generateDataset } from '../../src/emulator/generate-dataset.js';

/**
 * The emulated compute against the clock: a time against a setting, so this file runs alone
 * (scripts/test-plan.ts). The emulated job's behaviour: job.test.ts, side by side.
 */
const JOB = fileURLToPath(new URL('../../src/emulator/job.js', import.meta.url));

test('the emulated compute blocks for --compute-ms, not more', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'dsa-job-compute-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const data = join(root, 'data');
  await generateDataset(data, { files: 32, fileBytes: 64 * 1024, seed: 1 });
  const events = join(root, 'events');
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('DSA_')));
  const args = ['--data', data, '--compute-ms', '10', '--prep-ms', '1', '--workers', '1', '--batch-size', '2'];
  const result = await execa('node', [JOB, ...args], {
    reject: false,
    extendEnv: false,
    env: { ...env, DSA_MODE: 'synthetic', DSA_EVENTS_DIR: events, DSA_ITERATIONS: '40' },
    timeout: 120_000,
  });
  assert.equal(result.exitCode, 0, result.stderr);
  const [name] = readdirSync(events);
  const iters = readFileSync(join(events, name), 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string; computeMs: number })
    .filter((e) => e.type === 'iter');
  assert.ok(iters.length > 0, 'the job wrote its iterations');
  const meanComputeMs = iters.reduce((a, e) => a + e.computeMs, 0) / iters.length;
  // A setTimeout sleep overshot by about 0.5 ms on an idle machine; the bound is loose for a busy one.
  assert.ok(meanComputeMs >= 10 && meanComputeMs < 13, `mean computeMs ${meanComputeMs.toFixed(3)}`);
});
