import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GateOutputSchema } from '../../src/schema/gate-output.js';
import { GATE_OUTPUT_VERSION } from '../../src/schema/versions.js';
import { fixturePath } from '../gate/fixtures.js';
import { assertFollowsSchema, runJson } from './follows-schema.js';

const work = mkdtempSync(join(tmpdir(), 'dsa-gate-schema-'));
after(() => rmSync(work, { recursive: true, force: true }));
const EVERY_RULE = [
  '--max-fetch-stall',
  '20%',
  '--max-prep-stall',
  '30%',
  '--max-total-stall',
  '40%',
  '--min-throughput',
  '300',
  '--baseline',
  fixturePath('pass'),
];
const warnConfig = join(work, 'warn.json');
writeFileSync(
  warnConfig,
  JSON.stringify({ budgets: { fetchStall: { level: 'warn', max: '20%' }, prepStall: { max: '30%' } } }),
);

// Every stored profile gate can read, with every rule: passes, failures,
// unproven modes, a failed job, a hostile job name; and warn levels.
const CASES: [string, string[]][] = [
  ...[
    'pass',
    'pass-rerun',
    'fetch-bound',
    'prep-bound',
    'regressed',
    'regressed-noisy',
    'unproven-cold',
    'job-failed',
    'hostile',
  ].map((name): [string, string[]] => [name, [fixturePath(name), ...EVERY_RULE]]),
  ['warn levels from a config file', [fixturePath('fetch-bound'), '--config', warnConfig]],
];

for (const [what, args] of CASES) {
  test(`gate --json on ${what} follows GateOutputSchema`, async () => {
    const { exitCode, json } = await runJson(['gate', ...args, '--json'], work);
    const output = assertFollowsSchema(GateOutputSchema, json, `gate --json (${what})`);
    assert.equal(output.schemaVersion, GATE_OUTPUT_VERSION);
    assert.equal(output.kind, 'gate');
    assert.equal(output.exitCode, exitCode, 'the JSON carries the exit code the process returns');
  });
}
