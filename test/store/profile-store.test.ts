/**
 * Stored profiles from before nodes (no nodes[], no ranks[].node) still read,
 * and a profile with them reads back as written.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ExitCode, UserError } from '../../src/errors.js';
import { readProfile, writeProfile } from '../../src/store/profile-store.js';

const OLD = fileURLToPath(new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url));
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dsa-store-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

test("a stored profile from before nodes reads, without nodes[] or a rank's node", () => {
  const raw = JSON.parse(fs.readFileSync(OLD, 'utf8')) as Record<string, unknown>;
  assert.equal(raw.nodes, undefined, 'the fixture is an older profile, without nodes[]');
  const profile = readProfile(OLD);
  assert.equal(profile.nodes, undefined);
  const rank = profile.modes.cold!.ranks[0];
  assert.equal(rank.node, undefined);
});

test('a profile with nodes[] and ranks named on them reads back as written; an empty nodes[] is malformed', () => {
  const profile = readProfile(OLD);
  profile.nodes = [{ nodeRank: 0, ...profile.host }];
  for (const mode of Object.values(profile.modes))
    for (const rank of mode.ranks) rank.node = { hostname: profile.host.hostname, nodeRank: 0 };
  const file = path.join(root, 'with-nodes.json');
  writeProfile(file, profile);
  assert.deepEqual(readProfile(file), profile);

  const empty = path.join(root, 'empty-nodes.json');
  fs.writeFileSync(empty, JSON.stringify({ ...profile, nodes: [] }));
  assert.throws(
    () => readProfile(empty),
    (error: unknown) =>
      error instanceof UserError &&
      error.exitCode === ExitCode.CorruptFile &&
      /malformed at 'nodes'/.test(error.message),
  );
});
