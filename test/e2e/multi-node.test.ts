/**
 * Two namespaced nodes (two-nodes.ts) under one torchrun --nnodes 2 job, node 1's storage throttled so it is the
 * straggler: the merged profile's modes, its pace against the job's own meter over the same iterations, and the
 * straggler against the throttle that made it. Each is held against something measured in the same launch or set
 * by the test, so this file runs side by side (scripts/test-plan.ts). A killed node, in one launch and in a launch
 * per mode: multi-node-kill.test.ts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ExitCode } from '../../src/errors.js';
import { readProfile } from '../../src/store/profile-store.js';
import { processesMentioning, startCli } from './helpers.js';
import { NODES, profileTwo, skipReason, useTwoNodes, work } from './two-nodes.js';

useTwoNodes();

/**
 * The job's own meter of `rank` in the launch of `mode` (its folder: `launch`), over the iterations `measured`: mean ms
 * per iteration.
 */
function ownMeterMs(name: string, mode: string, rank: number, measured: readonly number[], launch = mode): number {
  for (const k of [0, 1]) {
    const log = join(work, `${name}.${NODES[k].hostname}.d`, launch, 'stdout.log');
    for (const line of readFileSync(log, 'utf8').split('\n')) {
      if (!line.startsWith('OWN_METER ')) continue;
      const meter = JSON.parse(line.slice('OWN_METER '.length)) as { rank: number; timesMs: number[] };
      if (meter.rank !== rank) continue;
      assert.ok(
        measured.every((i) => i < meter.timesMs.length),
        `the job metered its ${mode} iterations`,
      );
      return measured.reduce((sum, i) => sum + meter.timesMs[i], 0) / measured.length;
    }
  }
  throw new Error(`no OWN_METER line of rank ${rank} in the ${mode} run`);
}

/** The lines the job's ranks wrote as they started, over every launch of profile <name>. */
function jobStarts(name: string): string[] {
  return readFileSync(join(work, `${name}.starts`), 'utf8')
    .trim()
    .split('\n')
    .sort();
}

test("two namespaced nodes under torchrun --nnodes 2, in one launch: modes switch together, the merged pace is the job's own, the throttled node is named the straggler", async (t) => {
  if (skipReason) return t.skip(skipReason);
  const r0 = await profileTwo('two', []);
  // One launch on each node: each rank started once, and each node's profile says so.
  assert.deepEqual(jobStarts('two'), ['start rank 0', 'start rank 1']);
  for (const node of NODES) {
    const cost = readProfile(join(work, `two.${node.hostname}.json`)).cost!;
    assert.deepEqual([cost.schedule, cost.launches], ['one-launch', 1]);
  }
  const merged = readProfile(join(work, 'two.json'));
  assert.deepEqual([merged.cost!.schedule, merged.cost!.launches], ['one-launch', 1]);
  const { peerBytesPerSec: _measured, ...nodesOption } = merged.options.nodes!;
  assert.deepEqual(nodesOption, {
    count: 2,
    coordinator: `${NODES[0].address}:29611`,
    hostsCoordinator: true,
    merged: true,
  });
  assert.deepEqual(
    merged.nodes!.map((n) => [n.nodeRank, n.hostname]).sort(),
    [
      [0, 'dsa-node0'],
      [1, 'dsa-node1'],
    ].sort(),
  );
  // Each node proved its own state in each mode, and the merged state says so node by node.
  for (const node of NODES) {
    const own = readProfile(join(work, `two.${node.hostname}.json`));
    for (const mode of ['synthetic', 'cached', 'cold'] as const)
      assert.equal(own.modes[mode]!.state.proven, true, `${node.hostname} ${mode}: ${own.modes[mode]!.state.reason}`);
  }
  for (const mode of ['synthetic', 'cached', 'cold'] as const) {
    const result = merged.modes[mode]!;
    assert.equal(result.state.proven, true, result.state.reason);
    assert.deepEqual(result.ranks.map((r) => r.node!.hostname).sort(), ['dsa-node0', 'dsa-node1']);
    // The merged pace is the job's own: the pace rank's summary (its whole blocks after its warm-up), held against
    // the job's own meter of that rank over the same iterations, so a load that falls on some iterations falls on
    // both clocks alike.
    const paceRank = result.ranks.find((r) => r.rank === result.paceRank)!;
    const { warmupIterations, measuredIterations } = result.summary!;
    const measured = [...paceRank.iterations]
      .sort((a, b) => a.i - b.i)
      .slice(warmupIterations, warmupIterations + measuredIterations)
      .map((it) => it.i);
    const own = ownMeterMs('two', mode, paceRank.rank, measured, 'launch-1');
    // The job's meter counts each epoch's boundary (the last epoch's workers shut down, iter(loader) starting
    // new ones: every 25 iterations here) in the epoch's first iteration; the tool times it apart (gapMs,
    // createMs: the boundary stall). Added back here.
    const inWindow = new Set(measured);
    const boundaryMs = (paceRank.epochs ?? [])
      .filter((e) => inWindow.has(e.i))
      .reduce((sum, e) => sum + e.createMs + (e.gapMs ?? 0), 0);
    const pace = result.summary!.iterMs.mean + boundaryMs / measured.length;
    t.diagnostic(
      `${mode}: tool ${pace.toFixed(2)} ms (epoch boundaries ${(boundaryMs / measured.length).toFixed(2)}), job's own meter ${own.toFixed(2)} ms`,
    );
    assert.ok(
      Math.abs(pace - own) <= 0.07 * own,
      `${mode}: tool ${pace.toFixed(1)} ms, job's own meter ${own.toFixed(1)} ms`,
    );
  }
  const straggler = merged.analysis!.straggler!;
  assert.ok(straggler, 'a straggler is named');
  assert.equal(straggler.node!.hostname, 'dsa-node1');
  assert.equal(straggler.cause, 'fetch');
  assert.match(r0.stdout, /straggler: rank \d \(local rank 0 on node dsa-node1/);
  // The veth between the nodes, measured as the CLIs met, is what a partitioned cache's misses would cross.
  const peer = merged.nodes!.map((n) => n.peerBytesPerSec!);
  assert.ok(
    peer.every((rate) => rate > 10e6),
    `peer reads ${peer.join(', ')} bytes/s`,
  );
  const asked = await startCli(
    ['whatif', join(work, 'two.json'), '--nodes', '2', '--cache', '50%', '--cache-policy', 'partitioned', '--json'],
    { cwd: work },
  );
  assert.equal(asked.exitCode, ExitCode.Ok, asked.all);
  const answer = JSON.parse(asked.stdout) as {
    prediction: { scenario: { peerBytesPerSec: number } };
    nodes: { speedup: number };
  };
  assert.equal(answer.prediction.scenario.peerBytesPerSec, Math.min(...peer, merged.options.nodes!.peerBytesPerSec!));
  assert.deepEqual(processesMentioning(join(work, 'train.py')), []);
});
