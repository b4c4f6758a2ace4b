import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateDataset } from '../../src/emulator/generate-dataset.js';
import { ExitCode } from '../../src/errors.js';
import { VALIDATE_OUTPUT_VERSION, ValidateOutputSchema } from '../../src/schema/validate-output.js';
import { assertFollowsSchema, runJson } from './follows-schema.js';

const QUICK = fileURLToPath(new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url));
const EMULATOR = fileURLToPath(new URL('../../src/emulator/job.js', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'dsa-validate-schema-'));
after(() => rmSync(work, { recursive: true, force: true }));

/**
 * A profile to validate in seconds: the stored quick profile (its model
 * predicts), with its job swapped for the emulated one on a 16-file dataset
 * that runs 1 ms steps. The predictions are off; the output's shape is real.
 */
async function quickProfile(name: string, command?: string[]): Promise<string> {
  const dir = join(work, name);
  const data = join(dir, 'data');
  await generateDataset(data, { files: 16, fileBytes: 4096, seed: 3 });
  const profile = JSON.parse(readFileSync(QUICK, 'utf8'));
  profile.options.data = [data];
  profile.command = command ?? [
    process.execPath,
    EMULATOR,
    '--data',
    data,
    '--batch-size',
    '4',
    '--compute-ms',
    '1',
    '--prep-ms',
    '1',
  ];
  const path = join(dir, 'p.json');
  writeFileSync(path, JSON.stringify(profile));
  return path;
}

test('validate --json with a control, cache points and a CPU point follows ValidateOutputSchema', async () => {
  const profile = await quickProfile('every-kind');
  const { exitCode, json, stderr } = await runJson(
    ['validate', profile, '--cache', '50%,recommended', '--cpus', '1', '--max-iterations', '60', '--json'],
    dirname(profile),
  );
  assert.equal(exitCode, ExitCode.Ok, stderr);
  const output = assertFollowsSchema(ValidateOutputSchema, json, 'validate --json');
  assert.equal(output.schemaVersion, VALIDATE_OUTPUT_VERSION);
  assert.equal(output.kind, 'validate');
  // Cache points run only where the page cache can be capped; elsewhere they are listed as not run.
  const kinds = [...output.results, ...output.notRun.map((point) => ({ point }))].map((r) => r.point.kind);
  assert.deepEqual([...new Set(kinds)].sort(), ['cache', 'control', 'cpus']);
});

test('validate --json whose job fails follows ValidateOutputSchema (a failed point, its log)', async () => {
  const profile = await quickProfile('failing-job', ['/bin/sh', '-c', 'echo "loader exploded" >&2; exit 3']);
  const { exitCode, json } = await runJson(
    ['validate', profile, '--cpus', '1', '--no-control', '--json'],
    dirname(profile),
  );
  assert.equal(exitCode, ExitCode.JobFailed);
  const output = assertFollowsSchema(ValidateOutputSchema, json, 'validate --json (failed job)');
  assert.equal(output.results[0].status, 'failed');
  assert.match(output.results[0].failureTail ?? '', /loader exploded/);
});
