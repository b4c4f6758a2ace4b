/**
 * A profile names the node it ran the job on (nodes[]) beside its host facts,
 * and each rank its node, through the whole schedule and the profile file.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { runProfile } from '../../src/profile/run-profile.js';
import { readProfile } from '../../src/store/profile-store.js';
import { FAKE_LOCAL_HOSTNAME, fakeModeRunner, fakeProfileInput, type FakeJob } from './fake-mode-runner.js';

const JOB: FakeJob = {
  waitMs: { synthetic: 0, cached: 5, cold: 20 },
  stepMs: { synthetic: 50, cached: 50, cold: 50 },
  driftPerSec: 0,
  noise: 0.02,
  startupSec: 1,
  seed: 5,
};

let dir: string;
before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsa-nodes-'));
  fs.mkdirSync(path.join(dir, 'data'));
  fs.writeFileSync(path.join(dir, 'data', 'a.bin'), 'x');
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

async function profileOf(job: FakeJob, name: string) {
  const input = fakeProfileInput(dir, name, fakeModeRunner(job).run, { maxIterations: 100, minIterations: 20 });
  const outcome = await runProfile(input, { onSignal: () => () => {} });
  return { profile: outcome.profile, saved: readProfile(outcome.path) };
}

test("the profile's one node has the host's facts and the node rank its ranks reported; each pooled rank keeps its node", async () => {
  const node = { hostname: 'gpu-b', nodeRank: 1 };
  const { profile, saved } = await profileOf({ ...JOB, node }, 'node-1');
  assert.deepEqual(profile.nodes, [{ nodeRank: 1, ...profile.host }]);
  for (const mode of ['synthetic', 'cached', 'cold'] as const) {
    assert.equal(profile.modes[mode]?.passes?.length, 2, `${mode} pooled over its two runs`);
    assert.deepEqual(
      profile.modes[mode]?.ranks.map((r) => r.node),
      [node],
      mode,
    );
  }
  assert.deepEqual(saved.nodes, profile.nodes, 'the file holds nodes[]');
  assert.deepEqual(saved.modes.cold?.ranks[0].node, node, "the file holds each rank's node");
});

test('a job whose ranks name no node ran on node 0, the host', async () => {
  const { profile } = await profileOf(JOB, 'node-0');
  assert.deepEqual(profile.nodes, [{ nodeRank: 0, ...profile.host }]);
  // As runMode does (events-reader.ts processNode): the CLI's own host, node 0.
  assert.deepEqual(profile.modes.cold?.ranks[0].node, { hostname: FAKE_LOCAL_HOSTNAME, nodeRank: 0 });
});
