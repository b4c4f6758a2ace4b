/**
 * A job's nodes: the node the CLI ran the job on, and the merge of one mode's results measured on several nodes into
 * the one result the layers above read.
 *
 * The CLI runs the job on its own machine, so today every profile has one node; the merge is what a run over many nodes
 * hands to the split, the what-if, the report and the gate, which then need not know there were several (as
 * pool-passes.ts does for several runs of one mode).
 */
import { stageTotalsOf } from './prep-stages.js';
import type { Host, ModeResult, NodeIdentity, Pass, ProfileNode, RankResult } from '../schema/profile.js';
import { pickPaceRank } from './pace.js';
import { poolState, type PooledParts } from './pool-passes.js';

/** One node's result of a mode, and which node it is. */
export interface NodeModeResult {
  /** The node that measured it; its ranks that do not name their node ran there. */
  node: NodeIdentity;
  /** What the node measured: its own ranks, state proof and resources. */
  result: ModeResult;
}

/**
 * The node the CLI ran the job on: the host's facts, and the node rank the job's ranks reported (they run as the CLI's
 * children, on this machine; the lowest rank's where they differ), 0 when none did.
 */
export function localNode(host: Host, ranks: readonly RankResult[]): ProfileNode {
  const reported = [...ranks].sort((a, b) => a.rank - b.rank).find((r) => r.node !== undefined)?.node;
  return { nodeRank: reported?.nodeRank ?? 0, ...host };
}

/**
 * One mode measured at once on several nodes of a job, as one result:
 * - its ranks are every node's ranks, each keeping its node (a rank that names none gets the node it was measured on);
 * - the slowest rank of all sets the pace (pace.ts: data-parallel ranks wait for each other every iteration); the
 *   summary is its node's when that node's pace rank is the same, else the rank's own;
 * - the state is proven only where every node proved it (poolState: bytes add up, the least favourable node's
 *   residency);
 * - the job's tree spans the nodes, so its rates add up: CPU seconds per sample (each node's per sample of its pace
 *   rank, the same count on every node) and storage read throughput, null unless every node measured them;
 * - the first node (by node rank) that did not end ok gives the status, the stop reason, the exit and the logs; the
 *   pace node gives what is one machine's (resource samples, CPU affinity, subset, runs), its runs each proven only
 *   where every node proved that run.
 * Throws a RangeError on results that cannot be one job's mode: none, mixed modes, two results of one node, or one rank
 * number on two nodes (ranks are numbered across the job, as torchrun's RANK).
 */
export function mergeNodes(parts: readonly NodeModeResult[]): ModeResult {
  const ordered = checkParts(parts);
  const ranks = ordered
    .flatMap((part) =>
      part.result.ranks.map((rank) => ({ part, rank: rank.node !== undefined ? rank : { ...rank, node: part.node } })),
    )
    .sort((a, b) => a.rank.rank - b.rank.rank);
  for (let k = 1; k < ranks.length; k++) {
    if (ranks[k].rank.rank === ranks[k - 1].rank.rank) {
      throw new RangeError(
        `mergeNodes: rank ${ranks[k].rank.rank} was measured on node ${ranks[k - 1].part.node.nodeRank} and on ` +
          `node ${ranks[k].part.node.nodeRank}: ` +
          "ranks are numbered across the job's nodes (torchrun's RANK)",
      );
    }
  }
  const merged = ranks.map((r) => r.rank);
  if (ordered.length === 1) return { ...ordered[0].result, ranks: merged };

  const pace = pickPaceRank(merged);
  const paceEntry = pace === null ? undefined : ranks.find((r) => r.rank === pace);
  const base = paceEntry?.part ?? ordered[0];
  const results = ordered.map((part) => part.result);
  const notOk = results.find((r) => r.status !== 'ok');
  const startedAt = Math.min(...results.map((r) => r.startedAt));
  const endedAt = Math.max(...results.map((r) => r.startedAt + r.wallSec * 1000));
  // A node whose run stalled leaves the merged run stalled: the slowest sets the pace, and that node's did not hold.
  const stalled = results.find((r) => r.stalled)?.stalled;
  const { stalled: _baseStalled, ...baseResult } = base.result;
  return {
    ...baseResult,
    ...(stalled ? { stalled } : {}),
    status: notOk?.status ?? 'ok',
    stopReason: notOk?.stopReason ?? base.result.stopReason,
    jobExitCode: notOk?.jobExitCode ?? base.result.jobExitCode,
    jobSignal: notOk?.jobSignal ?? base.result.jobSignal,
    logs: notOk?.logs ?? base.result.logs,
    startedAt,
    wallSec: (endedAt - startedAt) / 1000,
    state: poolState(results, nodeParts(ordered)),
    ranks: merged,
    paceRank: pace?.rank ?? null,
    summary: pace === null ? null : base.result.paceRank === pace.rank ? base.result.summary : pace.summary,
    jobCpuSecPerSample: sumOfAll(results.map((r) => r.jobCpuSecPerSample)),
    storageReadBytesPerSec: sumOfAll(results.map((r) => r.storageReadBytesPerSec)),
    badEventLines: results.reduce((total, r) => total + r.badEventLines, 0),
    profilerCpuSec: results.every((r) => r.profilerCpuSec !== undefined)
      ? results.reduce((total, r) => total + r.profilerCpuSec!, 0)
      : undefined,
    ...stageTotalsOf(results),
    ...(base.result.passes ? { passes: base.result.passes.map((pass) => mergePass(pass, results)) } : {}),
  };
}

/** The parts in node-rank order, after the checks mergeNodes names. */
function checkParts(parts: readonly NodeModeResult[]): NodeModeResult[] {
  if (parts.length === 0) throw new RangeError('mergeNodes: no node results to merge');
  const modes = new Set(parts.map((p) => p.result.mode));
  if (modes.size > 1)
    throw new RangeError(
      `mergeNodes: the nodes' results are of different modes (${[...modes].join(', ')}): merge one mode at a time`,
    );
  const ordered = [...parts].sort((a, b) => a.node.nodeRank - b.node.nodeRank);
  for (let k = 1; k < ordered.length; k++) {
    if (ordered[k].node.nodeRank === ordered[k - 1].node.nodeRank) {
      throw new RangeError(
        `mergeNodes: two results of ` +
          `node ${ordered[k].node.nodeRank} (${ordered[k - 1].node.hostname}, ${ordered[k].node.hostname})`,
      );
    }
  }
  return ordered;
}

/** How a state's reason names the nodes: 'node 1 (gpu-b)'. */
function nodeParts(ordered: readonly NodeModeResult[]): PooledParts {
  return { plural: 'nodes', name: (index) => `node ${ordered[index].node.nodeRank} (${ordered[index].node.hostname})` };
}

/**
 * A run of the pace node, proven only where every node proved its run of that label, and not ok where any node's was
 * not.
 */
function mergePass(pass: Pass, results: readonly ModeResult[]): Pass {
  const same = results.map((r) => r.passes?.find((p) => p.label === pass.label));
  const notOk = same.find((p) => p !== undefined && p.status !== 'ok');
  return {
    ...pass,
    // A node without that run has no proof of it.
    proven: same.every((p) => p?.proven),
    status: notOk?.status ?? pass.status,
    stopReason: notOk?.stopReason ?? pass.stopReason,
  };
}

/** The sum, or null unless every value is known: a sum over some nodes is not the job's. */
function sumOfAll(values: readonly (number | null)[]): number | null {
  return values.every((v) => v !== null) ? values.reduce((total: number, v) => total + v!, 0) : null;
}
