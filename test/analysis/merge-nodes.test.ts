import assert from 'node:assert/strict';
import { test } from 'node:test';
import { localNode, mergeNodes, type NodeModeResult } from '../../src/analysis/merge-nodes.js';
import { poolPasses } from '../../src/analysis/pool-passes.js';
import type { Host, ModeResult, NodeIdentity, Pass, RankResult } from '../../src/schema/profile.js';
import { modeResult, summary } from './modes.js';

const T0 = 1_700_000_000_000;

interface FakeNode {
  nodeRank: number;
  hostname: string;
  /** Per-iteration time of each of its ranks, ms, by rank number. */
  ranks: Record<number, number>;
  proven?: boolean;
  reason?: string;
  readBytes?: number | null;
  consumedBytes?: number;
  startedAt?: number;
  wallSec?: number;
  status?: ModeResult['status'];
  jobCpuSecPerSample?: number | null;
  storageReadBytesPerSec?: number | null;
  /** Leave the ranks' node unset, as a result from before nodes (or a job that did not say). */
  ranksUnnamed?: boolean;
}

function rankResult(rank: number, iterMs: number, node: NodeIdentity | undefined): RankResult {
  return {
    rank,
    ...(node ? { node } : {}),
    pid: 1000 + rank,
    workers: 2,
    iterations: [{ i: 0, t: T0, waitMs: 0, computeMs: iterMs, samples: 32 }],
    summary: summary(iterMs, 0.5),
  };
}

/** One node's result of the cold mode: its ranks, its own pace (the slowest of them) and its own state proof. */
function fakeNode(spec: FakeNode): NodeModeResult {
  const node = { hostname: spec.hostname, nodeRank: spec.nodeRank };
  const base = modeResult('cold', {
    iterMs: 1,
    proven: spec.proven ?? true,
    reason: spec.reason ?? 'cold: read 100% of what it consumed',
    status: spec.status,
  });
  const ranks = Object.entries(spec.ranks).map(([rank, ms]) =>
    rankResult(Number(rank), ms, spec.ranksUnnamed ? undefined : node),
  );
  const pace = [...ranks].sort((a, b) => b.summary!.iterMs.mean - a.summary!.iterMs.mean)[0];
  const consumedBytes = spec.consumedBytes ?? 1e8;
  const readBytes = spec.readBytes === undefined ? consumedBytes : spec.readBytes;
  return {
    node,
    result: {
      ...base,
      startedAt: spec.startedAt ?? T0,
      wallSec: spec.wallSec ?? 60,
      state: {
        ...base.state,
        readBytes,
        consumedBytes,
        consumedSamples: 1000,
        readFraction: readBytes === null ? null : readBytes / consumedBytes,
        residentBytesBefore: spec.nodeRank * 1e6,
      },
      ranks,
      paceRank: pace.rank,
      // The node's own summary of its pace (pooled over runs, it differs from the rank's: here by its median).
      summary: { ...pace.summary!, medianIterMs: pace.summary!.iterMs.mean + 0.25 },
      resources: [
        {
          t: T0 + spec.nodeRank,
          cpuPct: 10 * (spec.nodeRank + 1),
          jobCpuSec: 0,
          jobProcesses: 3,
          jobReadBytes: 0,
          diskReadBytesPerSec: 0,
          pageCacheBytes: 0,
        },
      ],
      jobCpuSecPerSample: spec.jobCpuSecPerSample === undefined ? 0.01 : spec.jobCpuSecPerSample,
      storageReadBytesPerSec: spec.storageReadBytesPerSec === undefined ? 5e7 : spec.storageReadBytesPerSec,
      badEventLines: spec.nodeRank,
      logs: { stdout: `node${spec.nodeRank}/out.log`, stderr: `node${spec.nodeRank}/err.log` },
      profilerCpuSec: 2,
    },
  };
}

const A = { nodeRank: 0, hostname: 'gpu-a' };
const B = { nodeRank: 1, hostname: 'gpu-b' };
const C = { nodeRank: 2, hostname: 'gpu-c' };

test("two nodes: every rank, each with its node; the slowest rank, on node 1, sets the pace with its node's summary", () => {
  const merged = mergeNodes([
    fakeNode({ ...A, ranks: { 0: 10, 1: 11 } }),
    fakeNode({ ...B, ranks: { 2: 12, 3: 15 }, startedAt: T0 + 2000, wallSec: 61 }),
  ]);
  assert.deepEqual(
    merged.ranks.map((r) => [r.rank, r.node]),
    [
      [0, A],
      [1, A],
      [2, B],
      [3, B],
    ],
  );
  assert.equal(merged.paceRank, 3);
  assert.equal(merged.summary?.iterMs.mean, 15);
  assert.equal(merged.summary?.medianIterMs, 15.25, "node 1's own summary of its pace rank, not the rank's");
  assert.deepEqual(
    merged.resources.map((s) => s.cpuPct),
    [20],
    "one machine's samples: the pace node's",
  );
  assert.equal(merged.logs.stderr, 'node1/err.log');
  assert.equal(merged.startedAt, T0);
  assert.equal(merged.wallSec, 63, 'from the first start to the last end');
  assert.equal(merged.badEventLines, 1);
  assert.equal(merged.profilerCpuSec, 4);
  // The job's tree spans both nodes: its CPU per sample and its reads add up.
  assert.ok(Math.abs(merged.jobCpuSecPerSample! - 0.02) < 1e-12);
  assert.equal(merged.storageReadBytesPerSec, 1e8);
  assert.equal(merged.state.proven, true);
  assert.equal(merged.state.reason, 'cold: read 100% of what it consumed (each of 2 nodes)');
  assert.equal(merged.state.readBytes, 2e8);
  assert.equal(merged.state.consumedBytes, 2e8);
  assert.equal(merged.state.consumedSamples, 2000);
  assert.equal(merged.state.readFraction, 1);
  assert.equal(merged.state.residentBytesBefore, 1e6, 'cold: the most resident node');
});

test('three nodes, one of them unproven: the merge is unproven and says which node, and its bytes still add up', () => {
  const parts = [
    fakeNode({ ...A, ranks: { 0: 10, 1: 10 } }),
    fakeNode({ ...B, ranks: { 2: 14, 3: 10 }, readBytes: 5e7 }),
    fakeNode({
      ...C,
      ranks: { 4: 10, 5: 11 },
      proven: false,
      reason: 'cold: only 40% of what the job consumed came from storage',
    }),
  ];
  const merged = mergeNodes(parts);
  assert.equal(merged.state.proven, false);
  assert.equal(merged.state.reason, 'node 2 (gpu-c) of 3: cold: only 40% of what the job consumed came from storage');
  assert.equal(merged.state.readBytes, 2.5e8);
  assert.equal(merged.state.consumedBytes, 3e8);
  assert.equal(merged.state.readFraction, 2.5e8 / 3e8);
  assert.equal(merged.paceRank, 2);
  assert.deepEqual(
    merged.ranks.map((r) => r.node?.nodeRank),
    [0, 0, 1, 1, 2, 2],
  );
  assert.deepEqual(
    mergeNodes([parts[2], parts[0], parts[1]]),
    merged,
    'the order the nodes are given in does not matter',
  );

  const unknownReads = mergeNodes([parts[0], fakeNode({ ...B, ranks: { 2: 10 }, readBytes: null })]);
  assert.equal(unknownReads.state.readBytes, null, "a sum over some nodes is not the job's reads");
  assert.equal(unknownReads.state.readFraction, null);
});

test('rates that one node did not measure are unknown for the job', () => {
  const merged = mergeNodes([
    fakeNode({ ...A, ranks: { 0: 10 } }),
    fakeNode({ ...B, ranks: { 1: 10 }, jobCpuSecPerSample: null, storageReadBytesPerSec: null }),
  ]);
  assert.equal(merged.jobCpuSecPerSample, null);
  assert.equal(merged.storageReadBytesPerSec, null);
});

test('a node that failed makes the merge fail, with its stop reason and logs', () => {
  const failed = fakeNode({ ...B, ranks: { 1: 9 }, status: 'failed' });
  failed.result.stopReason = 'job-failed';
  failed.result.jobExitCode = 3;
  const merged = mergeNodes([fakeNode({ ...A, ranks: { 0: 12 } }), failed]);
  assert.deepEqual(
    [merged.status, merged.stopReason, merged.jobExitCode, merged.logs.stderr],
    ['failed', 'job-failed', 3, 'node1/err.log'],
  );
  assert.equal(merged.paceRank, 0, 'the pace is still the slowest rank');
});

test('ranks that do not name their node get the node they were measured on; those that do keep theirs', () => {
  const unnamed = fakeNode({ ...B, ranks: { 2: 10, 3: 10 }, ranksUnnamed: true });
  const own = fakeNode({ ...A, ranks: { 0: 10 } });
  own.result.ranks[0].node = { hostname: 'gpu-a.cluster', nodeRank: 0 };
  const merged = mergeNodes([own, unnamed]);
  assert.deepEqual(
    merged.ranks.map((r) => r.node),
    [{ hostname: 'gpu-a.cluster', nodeRank: 0 }, B, B],
  );
  assert.deepEqual(
    mergeNodes([unnamed]).ranks.map((r) => r.node),
    [B, B],
    'one node: its result, its ranks named',
  );
  assert.equal(mergeNodes([unnamed]).state.reason, unnamed.result.state.reason, 'one node: its own proof, untouched');
});

test("the pace rank's own summary when its node set its pace by another rank (a pooled node's last run)", () => {
  const node = fakeNode({ ...B, ranks: { 2: 12, 3: 15 } });
  node.result.paceRank = 2;
  node.result.summary = node.result.ranks[0].summary;
  const merged = mergeNodes([fakeNode({ ...A, ranks: { 0: 10 } }), node]);
  assert.equal(merged.paceRank, 3);
  assert.equal(merged.summary, node.result.ranks[1].summary);
});

test("the pace node's runs, each proven only where every node proved it", () => {
  const pass = (label: string, proven: boolean): Pass => ({
    label,
    startedAt: T0,
    wallSec: 30,
    midAt: T0 + 15_000,
    status: 'ok',
    stopReason: 'precision',
    proven,
    measuredIterations: 100,
    iterMs: { mean: 15, halfWidth: 1, proven },
    waitMs: null,
    computeMs: null,
    blocks: 10,
  });
  const a = fakeNode({ ...A, ranks: { 0: 10 } });
  const b = fakeNode({ ...B, ranks: { 1: 15 } });
  a.result.passes = [pass('cold', true), pass('cold-2', false)];
  b.result.passes = [pass('cold', true), pass('cold-2', true)];
  const merged = mergeNodes([a, b]);
  assert.deepEqual(
    merged.passes?.map((p) => [p.label, p.proven, p.iterMs?.mean]),
    [
      ['cold', true, 15],
      ['cold-2', false, 15],
    ],
  );
  assert.equal(
    mergeNodes([fakeNode({ ...A, ranks: { 0: 10 } }), fakeNode({ ...B, ranks: { 1: 15 } })]).passes,
    undefined,
  );
});

test('results that cannot be one mode of one job are refused', () => {
  assert.throws(() => mergeNodes([]), /no node results/);
  const cached = fakeNode({ ...B, ranks: { 1: 10 } });
  cached.result.mode = 'cached';
  assert.throws(() => mergeNodes([fakeNode({ ...A, ranks: { 0: 10 } }), cached]), /different modes \(cold, cached\)/);
  assert.throws(
    () => mergeNodes([fakeNode({ ...A, ranks: { 0: 10 } }), fakeNode({ ...A, hostname: 'gpu-z', ranks: { 1: 10 } })]),
    /two results of node 0/,
  );
  assert.throws(
    () => mergeNodes([fakeNode({ ...A, ranks: { 0: 10, 1: 10 } }), fakeNode({ ...B, ranks: { 1: 10 } })]),
    /rank 1 was measured on node 0 and on node 1/,
  );
});

test("pooling runs keeps each rank's node", () => {
  const run = (startedAt: number) => {
    const result = fakeNode({ ...B, ranks: { 2: 10 }, startedAt }).result;
    return { ...result, passes: undefined };
  };
  const pooled = poolPasses([
    { label: 'cold', result: run(T0) },
    { label: 'cold-2', result: run(T0 + 100_000) },
  ]).modes.cold!;
  assert.equal(pooled.passes?.length, 2);
  assert.deepEqual(
    pooled.ranks.map((r) => r.node),
    [B],
  );
  assert.match(pooled.state.reason, /\(each of 2 runs\)$/, 'runs are still runs in the reason');
});

const HOST: Host = {
  hostname: 'gpu-a',
  cpuModel: 'x',
  cpus: 8,
  memBytes: 2 ** 34,
  os: 'Linux',
  kernel: '6.1',
  gpus: [],
  root: false,
  cgroup: 'v2',
};

test('the local node has the host facts and the node rank its ranks reported, 0 before any', () => {
  assert.deepEqual(localNode(HOST, []), { nodeRank: 0, ...HOST });
  const ranks = fakeNode({ ...B, ranks: { 5: 10, 4: 10 } }).result.ranks;
  assert.deepEqual(localNode(HOST, ranks), { nodeRank: 1, ...HOST });
  assert.equal(
    localNode(HOST, fakeNode({ ...B, ranks: { 0: 1 }, ranksUnnamed: true }).result.ranks).nodeRank,
    0,
    'ranks that did not say: node 0',
  );
});
