import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WhatifOutputSchema } from '../../src/schema/whatif-output.js';
import { WHATIF_OUTPUT_VERSION } from '../../src/schema/versions.js';
import { fixturePath } from '../gate/fixtures.js';
import { assertFollowsSchema, runJson } from './follows-schema.js';

const QUICK = fileURLToPath(new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'dsa-whatif-schema-'));
after(() => rmSync(work, { recursive: true, force: true }));

/** The quick profile with a CPU sweep (the cached mode again on one CPU), so that the model fits its CPU scaling. */
function withCpuSweep(): string {
  const profile = JSON.parse(readFileSync(QUICK, 'utf8'));
  profile.cpuSweep = [{ ...profile.modes.cached, cpus: [0] }];
  const path = join(work, 'cpu-sweep.json');
  writeFileSync(path, JSON.stringify(profile));
  return path;
}

// Each knob, so that every optional field (a fitted or assumed scaling, an
// epochs basis, a stall that no value removes) is printed by some case.
const CASES: [string, string[]][] = [
  ['the profiled settings', [QUICK]],
  [
    'every knob',
    [
      QUICK,
      '--cache',
      '50%',
      '--cpus',
      '4',
      '--storage-bw',
      '50MB/s',
      '--gpus',
      '2',
      '--gpu-speedup',
      '2',
      '--epochs',
      '10',
    ],
  ],
  ['a fitted CPU scaling', [withCpuSweep(), '--cpus', '8']],
  ['MinIO with no cache', [QUICK, '--cache', '0', '--cache-policy', 'minio']],
  ['a fetch-bound profile', [fixturePath('fetch-bound')]],
  ['a prep-bound profile', [fixturePath('prep-bound')]],
  ['an unproven cold mode', [fixturePath('unproven-cold')]],
  ['a hostile job name', [fixturePath('hostile')]],
];

for (const [what, args] of CASES) {
  test(`whatif --json on ${what} follows WhatifOutputSchema`, async () => {
    const { exitCode, json } = await runJson(['whatif', ...args, '--json'], work);
    assert.equal(exitCode, 0);
    const output = assertFollowsSchema(WhatifOutputSchema, json, `whatif --json (${what})`);
    assert.equal(output.schemaVersion, WHATIF_OUTPUT_VERSION);
    assert.equal(output.kind, 'whatif');
  });
}

test('the schema check sees a field the schema does not name, at any depth, and a wrong version', async () => {
  const { json } = await runJson(['whatif', QUICK, '--json'], work);
  const output = WhatifOutputSchema.parse(json);
  const nested = {
    ...output,
    baseline: { ...output.baseline, scenario: { ...output.baseline.scenario, ramBytes: 1 } },
  };
  assert.throws(() => assertFollowsSchema(WhatifOutputSchema, nested, 'nested'), /fields its schema does not name/);
  assert.throws(
    () => assertFollowsSchema(WhatifOutputSchema, { ...output, extra: 1 }, 'top'),
    /fields its schema does not name/,
  );
  assert.throws(
    () => assertFollowsSchema(WhatifOutputSchema, { ...output, schemaVersion: WHATIF_OUTPUT_VERSION + 1 }, 'version'),
    /schemaVersion/,
  );
});
