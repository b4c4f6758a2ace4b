// A profile's runs on several nodes at once: each node's CLI runs the same schedule and writes its own profile; the
// link starts the launches together, and the coordinator's CLI merges every node's result of each run (merge-nodes.ts).
// Inside one launch the blocks switch through the job's own collective (DSA_NODES).
import { lookup } from 'node:dns/promises';
import { hostname, networkInterfaces } from 'node:os';
import { mergeNodes } from '../../analysis/merge-nodes.js';
import { ExitCode, UserError } from '../../errors.js';
import { ENV } from '../../schema/events.js';
import type { Host, ModeResult, NodeIdentity, ProfileNode, StorageProbe } from '../../schema/profile.js';
import type { ArtifactSink } from '../../store/artifact-sink.js';
import { TOOL_VERSION } from '../../version.js';
import { ProfileBook, type BookedRun } from '../profile-book.js';
import { runVerdict, type RunVerdict } from '../run-setup.js';
import { CoordinatorLink } from './coordinator-link.js';
import { FollowerLink } from './follower-link.js';
import type { NodeHello, NodeLink, NodeRunResult } from './node-link.js';
import type { LinkTiming } from './peer.js';
import type { NodePlan } from './node-plan.js';
import { NODES_TEXT } from './nodes-text.js';

/** What a profile over several nodes needs beyond a one-node profile's input. */
export interface NodesInput {
  plan: NodePlan;
  timing: LinkTiming;
  /** Where the coordinator's node writes the merged profile (--out); each node's own is the run's outFile. */
  mergedOutFile: string;
}

/** The options that fix a profile's schedule of runs: every node must run the same. */
export interface ScheduleOptions {
  modes: readonly string[];
  passes: number;
  precision: number;
  minIterations: number;
  maxIterations: number;
  cpuSweep?: readonly number[];
  workersSweep?: readonly number[];
}

/** The nodes kept in step, and on the coordinator's node the merged profile. */
export class NodeRuns {
  private constructor(
    readonly link: NodeLink,
    /** The merged profile, on the node that hosts the coordinator; null on the others. */
    readonly merged: ProfileBook | null,
  ) {}

  /** Meets the other nodes, hosting the coordinator or dialling it; resolves once all arrived with one schedule. */
  static async open(
    nodes: NodesInput,
    own: ProfileBook,
    schedule: ScheduleOptions,
    sink?: ArtifactSink,
  ): Promise<NodeRuns> {
    const profile = own.profile;
    const hello: NodeHello = {
      version: TOOL_VERSION,
      schedule: JSON.stringify(schedule),
      runId: nodes.plan.runId,
      host: profile.host,
      dataset: { files: profile.dataset.files, bytes: profile.dataset.bytes },
    };
    const hosts = nodes.plan.hostsCoordinator ?? (await holdsAddress(nodes.plan.coordinator.host));
    profile.options.nodes = {
      count: nodes.plan.nodes,
      coordinator: `${nodes.plan.coordinator.host}:${nodes.plan.coordinator.port}`,
      hostsCoordinator: hosts,
    };
    own.save();
    if (!hosts) {
      const follower = await FollowerLink.open(nodes.plan, hello, own.path, nodes.timing);
      profile.options.nodes.peerBytesPerSec = await follower.peerBandwidth();
      own.save();
      return new NodeRuns(follower, null);
    }
    const link = await CoordinatorLink.open(nodes.plan, hello, nodes.timing);
    profile.options.nodes.peerBytesPerSec = link.ownPeerBytesPerSec;
    own.save();
    const merged = new ProfileBook(
      {
        ...profile,
        options: { ...profile.options, nodes: { ...profile.options.nodes, merged: true } },
        nodes: [
          ownNode(profile.host, 0, own.path, link.ownPeerBytesPerSec),
          ...link.arrived.map((node, k) => ownNode(node.hello.host, k + 1, node.profilePath, link.peerBytesPerSec[k])),
        ],
        modes: {},
        analysis: null,
        // One list: what this node warns of holds for the merged profile too.
        warnings: profile.warnings,
      },
      nodes.mergedOutFile,
      sink,
    );
    for (const node of link.arrived) {
      const theirs = node.hello.dataset;
      if (
        theirs.files !== profile.dataset.files ||
        Math.abs(theirs.bytes - profile.dataset.bytes) > 0.01 * profile.dataset.bytes
      ) {
        profile.warnings.push(
          `node ${node.hello.host.hostname} profiles ${theirs.files} files (${theirs.bytes} bytes) and this ` +
            `node ${profile.dataset.files} (${profile.dataset.bytes}): ` +
            `the merged profile describes this node's dataset; each node's own profile has its own`,
        );
      }
    }
    merged.save();
    return new NodeRuns(link, merged);
  }

  /** The nodes' count, for the ranks' all-reduce that waits for every node's state at a block switch (agree_look). */
  get jobEnv(): Record<string, string> {
    return { [ENV.nodes]: String(this.link.nodes) };
  }

  /** Resolves once every node has set its cache state for the run. */
  barrier(label: string): Promise<void> {
    return this.link.barrier(label);
  }

  /** Hands this node's result of a run over; returns the verdict every node follows (the coordinator merges). */
  async settle(run: BookedRun, result: ModeResult, node: NodeIdentity): Promise<RunVerdict> {
    let merged: ModeResult | null = null;
    const { verdict, results } = await this.link.settle(run.label, { node, result }, (all) => {
      merged = mergeOrExplain(all);
      return runVerdict(merged, run.workers);
    });
    if (this.merged && results && merged) {
      this.placeNodes(results);
      if (verdict.workersNotApplied === null) this.merged.record(run, merged);
      else this.merged.save();
    }
    return verdict;
  }

  /** Ends the profile in order; the merged profile takes the slowest node's storage probe (it bounds the job). */
  async finish(ownProbe: StorageProbe | null): Promise<void> {
    const finals = await this.link.finish({ storageProbe: ownProbe });
    if (!this.merged) return;
    const probes = [ownProbe, ...finals.map((f) => f.storageProbe)].filter((p): p is StorageProbe => p !== null);
    const slowest = probes.sort((a, b) => a.bytesPerSec - b.bytesPerSec)[0];
    if (slowest) this.merged.profile.storageProbe = slowest;
    else delete this.merged.profile.storageProbe;
  }

  /** The node ranks the job's ranks reported, once known, on the merged profile's nodes. */
  private placeNodes(results: readonly NodeRunResult[]): void {
    const nodes = this.merged!.profile.nodes!;
    results.forEach((r, k) => {
      if (nodes[k] && r.result.ranks.length > 0) nodes[k] = { ...nodes[k], nodeRank: r.node.nodeRank };
    });
    if (new Set(nodes.map((n) => n.nodeRank)).size === nodes.length) nodes.sort((a, b) => a.nodeRank - b.nodeRank);
  }
}

/** The results, each node named by its job's node rank, or by the order they met where two share one. */
function distinctNodes(results: readonly NodeRunResult[]): { node: NodeIdentity; result: ModeResult }[] {
  if (new Set(results.map((r) => r.node.nodeRank)).size === results.length) return [...results];
  return results.map((r, k) => {
    const node = { hostname: r.node.hostname, nodeRank: k };
    return { node, result: { ...r.result, ranks: r.result.ranks.map((rank) => ({ ...rank, node })) } };
  });
}

/** mergeNodes' refusal (one rank number on two nodes: each node ran a job of its own), as the fix to make. */
function mergeOrExplain(results: readonly NodeRunResult[]): ModeResult {
  try {
    return mergeNodes(distinctNodes(results));
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new UserError(NODES_TEXT.notOneJob(error.message.replace(/^mergeNodes: /, '')), ExitCode.BadValue);
  }
}

function ownNode(host: Host, nodeRank: number, profile: string, peerBytesPerSec: number | null): ProfileNode {
  return { nodeRank, ...host, profile, peerBytesPerSec };
}

/** Whether this machine holds `host`'s address (its name, or an interface's address): it hosts the coordinator. */
export async function holdsAddress(host: string): Promise<boolean> {
  if (host === hostname()) return true;
  const local = new Set(Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address)));
  const found = await lookup(host, { all: true }).catch(() => []);
  return found.some((a) => local.has(a.address));
}
