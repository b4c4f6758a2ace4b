/**
 * A job's nodes: the node the CLI ran the job on, and the nodes of a stored
 * profile (older ones included). The CLI runs the job on its own machine, so
 * today every profile has one node.
 */
import type { Host, NodeIdentity, Profile, ProfileNode, RankResult } from '../schema/profile.js';

/**
 * The node the CLI ran the job on: the host's facts, and the node rank the
 * job's ranks reported (they run as the CLI's children, on this machine; the
 * lowest rank's where they differ), 0 when none did.
 */
export function localNode(host: Host, ranks: readonly RankResult[]): ProfileNode {
  const reported = [...ranks].sort((a, b) => a.rank - b.rank).find((r) => r.node !== undefined)?.node;
  return { nodeRank: reported?.nodeRank ?? 0, ...host };
}

/** The nodes of a profile; an older profile without `nodes` ran on one, node 0, its `host`. */
export function profileNodes(profile: Pick<Profile, 'host' | 'nodes'>): ProfileNode[] {
  return profile.nodes ?? [{ nodeRank: 0, ...profile.host }];
}

/** The node a rank ran on; a rank of an older profile, without `node`, ran on node 0, the profile's `host`. */
export function rankNode(rank: RankResult, profile: Pick<Profile, 'host'>): NodeIdentity {
  return rank.node ?? { hostname: profile.host.hostname, nodeRank: 0 };
}
