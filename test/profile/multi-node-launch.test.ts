/**
 * Several nodes in one launch: two CLIs over a real TCP link on loopback, each
 * with a fake launch runner (its blocks timed by the fake mode runner). The
 * link only starts the launch together and gathers the blocks' results; the
 * blocks switch inside the job (DSA_NODES, the ranks' all-reduce: tested in
 * test/python/test_node_agreement.py).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ExitCode } from '../../src/errors.js';
import type { NodePlan } from '../../src/profile/nodes/node-plan.js';
import type { LaunchInput, LaunchOutcome } from '../../src/profile/run-launch.js';
import type { ModeRunInput } from '../../src/profile/run-mode.js';
import { runProfile, type ProfileRunInput } from '../../src/profile/run-profile.js';
import { ENV } from '../../src/schema/events.js';
import type { ModeResult } from '../../src/schema/profile.js';
import { readProfile } from '../../src/store/profile-store.js';
import { fakeModeRunner, fakeProfileInput, type FakeJob, type FakeRunner } from './fake-mode-runner.js';
import { freePort } from '../support/free-port.js';

let dir: string;
before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsa-multinode-launch-'));
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const BASE_JOB: Omit<FakeJob, 'seed'> = {
  waitMs: { synthetic: 0, cached: 5, cold: 10 },
  stepMs: { synthetic: 50, cached: 50, cold: 50 },
  driftPerSec: 0,
  noise: 0.02,
  startupSec: 1,
};

/** What a node's fake launches saw: each launch's folder, after its barrier, and the DSA_NODES its job was given. */
interface Seen {
  launches: string[];
  nodesEnv: (string | undefined)[];
}

/**
 * A launch as runLaunch makes it, faked: the barrier before the job starts, then each block timed by `runner` (its
 * state set and undone there); `fail` makes that block's job fail.
 */
function fakeLaunch(runner: FakeRunner, seen: Seen, fail?: string, switches = true) {
  return async (input: LaunchInput): Promise<LaunchOutcome> => {
    await input.beforeJobStart?.();
    // A launch on nodes waits for every node's first state: one without the barrier is marked, and fails the test.
    seen.launches.push(`${path.basename(input.modeDir)}${input.beforeJobStart ? '' : ' without the barrier'}`);
    seen.nodesEnv.push(input.env[ENV.nodes]);
    const results: ModeResult[] = [];
    for (const block of input.blocks) {
      const result = await runner.run({
        ...(input as unknown as ModeRunInput),
        ...block,
        modeDir: path.join(input.modeDir, block.label),
        beforeJobStart: undefined,
      });
      results.push(block.label === fail ? { ...result, status: 'failed', jobExitCode: 1 } : result);
      if (block.label === fail || !switches) break;
    }
    return { results, notRun: input.blocks.slice(results.length), switchable: switches, jobIterations: 100 };
  };
}

function nodeInput(name: string, port: number, hosts: boolean, launch: ProfileRunInput['launchRunner']) {
  const plan: NodePlan = {
    nodes: 2,
    coordinator: { host: '127.0.0.1', port },
    hostsCoordinator: hosts,
    from: '--nnodes',
    runId: 'test',
  };
  return fakeProfileInput(dir, name, undefined, {
    modes: ['synthetic', 'cached', 'cold'],
    maxIterations: 120,
    minIterations: 20,
    passes: 1,
    launchRunner: launch,
    nodes: {
      plan,
      timing: { arriveTimeoutSec: 10, silenceSec: 2, pingMs: 200 },
      mergedOutFile: path.join(dir, `${name}-merged.json`),
    },
  });
}

test('two nodes, one launch each: the job is told the node count, the merged profile has every block of both and names the slow node', async () => {
  const port = await freePort();
  const a = fakeModeRunner({ ...BASE_JOB, seed: 1, rank: 0, node: { hostname: 'node-a', nodeRank: 0 } });
  // Node b's loader waits 40 ms more in the cold mode: its storage is the slow one.
  const b = fakeModeRunner({
    ...BASE_JOB,
    waitMs: { synthetic: 0, cached: 5, cold: 50 },
    seed: 2,
    rank: 1,
    node: { hostname: 'node-b', nodeRank: 1 },
  });
  const seenA: Seen = { launches: [], nodesEnv: [] };
  const seenB: Seen = { launches: [], nodesEnv: [] };
  const [outA, outB] = await Promise.all([
    runProfile(nodeInput('a', port, true, fakeLaunch(a, seenA)), { onSignal: () => () => {} }),
    runProfile(nodeInput('b', port, false, fakeLaunch(b, seenB)), { onSignal: () => () => {} }),
  ]);
  assert.equal(outA.exitCode, ExitCode.Ok);
  assert.equal(outB.exitCode, ExitCode.Ok);
  for (const seen of [seenA, seenB]) assert.deepEqual(seen, { launches: ['launch-1'], nodesEnv: ['2'] });
  const merged = readProfile(outA.path);
  assert.equal(merged.status, 'complete');
  for (const mode of ['synthetic', 'cached', 'cold'] as const)
    assert.deepEqual(
      merged.modes[mode]!.ranks.map((r) => [r.rank, r.node!.hostname]),
      [
        [0, 'node-a'],
        [1, 'node-b'],
      ],
    );
  assert.equal(merged.analysis!.straggler?.node?.hostname, 'node-b');
  assert.deepEqual([merged.cost!.schedule, merged.cost!.launches], ['one-launch', 1]);
  for (const name of ['a', 'b']) {
    const own = readProfile(path.join(dir, `${name}.json`));
    assert.deepEqual([own.cost!.schedule, own.cost!.launches], ['one-launch', 1]);
    assert.deepEqual(Object.keys(own.modes).sort(), ['cached', 'cold', 'synthetic']);
  }
});

test('a job that does not offer to switch on several nodes gets a launch a mode, every node starting each together', async () => {
  const port = await freePort();
  const a = fakeModeRunner({ ...BASE_JOB, seed: 5, rank: 0, node: { hostname: 'node-a', nodeRank: 0 } });
  const b = fakeModeRunner({ ...BASE_JOB, seed: 6, rank: 1, node: { hostname: 'node-b', nodeRank: 1 } });
  const seenA: Seen = { launches: [], nodesEnv: [] };
  const seenB: Seen = { launches: [], nodesEnv: [] };
  const warnings: string[] = [];
  const [outA, outB] = await Promise.all([
    runProfile(nodeInput('e', port, true, fakeLaunch(a, seenA, undefined, false)), {
      onSignal: () => () => {},
      onWarning: (w) => warnings.push(w),
    }),
    runProfile(nodeInput('f', port, false, fakeLaunch(b, seenB, undefined, false)), { onSignal: () => () => {} }),
  ]);
  assert.equal(outA.exitCode, ExitCode.Ok);
  assert.equal(outB.exitCode, ExitCode.Ok);
  for (const seen of [seenA, seenB]) assert.deepEqual(seen.launches, ['launch-1', 'cached', 'cold']);
  assert.deepEqual(Object.keys(readProfile(outA.path).modes).sort(), ['cached', 'cold', 'synthetic']);
  const own = readProfile(path.join(dir, 'e.json'));
  assert.deepEqual([own.cost!.schedule, own.cost!.launches], ['separate-launches', 3]);
  assert.ok(
    warnings.some((w) => w.includes('on several nodes')),
    warnings.join('\n'),
  );
});

test("a block that failed on one node ends both nodes' schedules with the job's failure", async () => {
  const port = await freePort();
  const a = fakeModeRunner({ ...BASE_JOB, seed: 3, rank: 0, node: { hostname: 'node-a', nodeRank: 0 } });
  const b = fakeModeRunner({ ...BASE_JOB, seed: 4, rank: 1, node: { hostname: 'node-b', nodeRank: 1 } });
  const seen: Seen = { launches: [], nodesEnv: [] };
  const [outA, outB] = await Promise.all([
    runProfile(nodeInput('c', port, true, fakeLaunch(a, seen)), { onSignal: () => () => {} }),
    runProfile(nodeInput('d', port, false, fakeLaunch(b, { launches: [], nodesEnv: [] }, 'cached')), {
      onSignal: () => () => {},
    }),
  ]);
  assert.equal(outB.exitCode, ExitCode.JobFailed);
  assert.equal(outA.exitCode, ExitCode.JobFailed);
  assert.equal(outA.nodeLost, undefined, 'the coordinator holds the failed block in the merged profile');
  assert.equal(readProfile(outA.path).modes.cached!.status, 'failed');
});
