/**
 * The what-if knobs (src/whatif/knobs/): each declares a flag whatif's --help
 * shows, and their flags become the query in the order the answer lists them
 * as changed (its `changed` in --json): a share of the dataset last, a flag
 * after the flags it reads.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Profile } from '../../../src/schema/profile.js';
import { ExitCode, type UserError } from '../../../src/errors.js';
import { whatifCommand } from '../../../src/cli/whatif.js';
import { KNOBS } from '../../../src/whatif/knobs/index.js';
import { knobAttribute } from '../../../src/whatif/knobs/knob.js';
import { parseKnobFlags, profileDefaults, resolveAgainstProfile } from '../../../src/whatif/knobs/query.js';
import { askedPipelineFlags, parsePipelineFlags } from '../../../src/whatif/knobs/pipeline.js';
import { fakeIo } from '../../cli/fake-io.js';

const FIXTURE = new URL('../../../../test/fixtures/profiles/emulated-quick.json', import.meta.url);
const profile = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Profile;

test('every knob is a whatif flag, named as commander names its value', () => {
  const command = whatifCommand(fakeIo(process.cwd()), { exitCode: 0 });
  for (const knob of KNOBS) {
    const option = command.options.find((o) => o.long === `--${knob.name}`);
    assert.ok(option, `--${knob.name}`);
    assert.equal(option.attributeName(), knobAttribute(knob));
  }
  assert.equal(new Set(KNOBS.map((k) => k.field)).size, KNOBS.length, 'one knob per scenario field');
});

test('the query holds the flags in the order the answer lists them: the cache, resolved against the profile, last', () => {
  const asked = parseKnobFlags({ cache: '50%', cachePolicy: 'minio', gpuSpeedup: '2', cpus: '4' });
  profileDefaults(asked, profile);
  resolveAgainstProfile(asked, profile);
  assert.deepEqual(Object.keys(asked.query), ['cpus', 'gpuSpeedup', 'cachePolicy', 'cacheBytes']);
  assert.equal(asked.query.cacheBytes, profile.dataset.bytes / 2);
});

test('defaults left as they are ask for nothing', () => {
  assert.deepEqual(parseKnobFlags({ gpuSpeedup: '1', cachePolicy: 'page-cache' }).query, {});
});

test('--cache-policy partitioned reads --nodes: set after it, and its errors first', () => {
  const asked = parseKnobFlags({ cachePolicy: 'partitioned', nodes: '4', peerBw: '1GB/s' });
  assert.deepEqual(asked.query, { nodes: 4, partitioned: true, cachePolicy: 'minio', peerBytesPerSec: 1e9 });
  assert.throws(
    () => parseKnobFlags({ cachePolicy: 'partitioned' }),
    (e: UserError) => e.exitCode === ExitCode.Usage,
  );
  assert.throws(() => parseKnobFlags({ cachePolicy: 'partitioned', nodes: 'x' }), /--nodes/);
  assert.throws(() => parseKnobFlags({ peerBw: '1GB/s' }), /--peer-bw is the network/);
});

test('a partitioned cache without --peer-bw takes the network the profile measured, or names the flag', () => {
  const asked = parseKnobFlags({ cachePolicy: 'partitioned', nodes: '2' });
  assert.throws(() => profileDefaults(asked, profile), /give --peer-bw RATE/);
  const measured = { ...profile, nodes: [{ peerBytesPerSec: 5e8 }, { peerBytesPerSec: 3e8 }] } as unknown as Profile;
  profileDefaults(asked, measured);
  assert.equal(asked.query.peerBytesPerSec, 3e8);
});

test('the pipeline flags parse through their knob list: each error names its flag, a caveat names the flags asked', () => {
  const query = parsePipelineFlags({ syncSave: true, persistentWorkers: 'off', checkpointBudget: '5%' });
  assert.deepEqual(query, { saveMode: 'sync', overheadBudget: 0.05, persistentWorkers: false });
  assert.equal(parsePipelineFlags({ persistentWorkers: true }).persistentWorkers, true);
  assert.throws(() => parsePipelineFlags({ asyncSave: true, syncSave: true }), /two save modes/);
  assert.throws(() => parsePipelineFlags({ persistentWorkers: 'maybe' }), /--persistent-workers: 'maybe'/);
  assert.throws(() => parsePipelineFlags({ prefetchFactor: '0' }), /--prefetch-factor/);
  assert.deepEqual(askedPipelineFlags({ checkpointEvery: 9, saveMode: 'async', overheadBudget: 0.1 }, 'saves'), [
    '--checkpoint-every',
    '--async-save/--sync-save',
  ]);
  assert.deepEqual(askedPipelineFlags({ prefetchFactor: 4 }, 'epochs'), ['--prefetch-factor']);
});
