/**
 * --peer-bw: with a partitioned cache, the bytes/s a node reads from a peer's cache (Scenario.peerBytesPerSec): the
 * hits another node holds are fetched at it, beside the storage's misses.
 */
import { ExitCode, UserError } from '../../errors.js';
import type { Profile } from '../../schema/profile.js';
import { parseRate } from '../../units.js';
import type { Knob } from './knob.js';
import { KNOB_TEXT } from './knob-text.js';

export const PEER_BW_KNOB: Knob<number> = {
  name: 'peer-bw',
  flag: {
    syntax: '--peer-bw <rate>',
    help:
      "with --cache-policy partitioned: bytes/s a node reads from a peer's cache (the network between the nodes), " +
      'e.g. 1.2GB/s (default: what a profile over several nodes measured as its CLIs met)',
  },
  field: 'peerBytesPerSec',
  reads: ['cache-policy'],
  parse: (text, asked) => {
    if (asked.partitioned !== true) {
      throw new UserError(KNOB_TEXT.peerBwNeedsPartitioned, ExitCode.Usage);
    }
    return parseRate(text, '--peer-bw');
  },
  profileDefault: (query, profile) => {
    if (query.partitioned) query.peerBytesPerSec = measuredPeerBandwidth(profile);
  },
  fetchStage: { peerBytesPerSec: '--peer-bw' },
};

/**
 * The network between nodes a multi-node profile measured as its CLIs met (the slowest any node read at), for a
 * partitioned cache's misses; a UserError naming --peer-bw where it measured none.
 */
function measuredPeerBandwidth(profile: Profile): number {
  const each = [profile.options.nodes?.peerBytesPerSec, ...(profile.nodes ?? []).map((n) => n.peerBytesPerSec)];
  const measured = each.filter((v): v is number => typeof v === 'number' && v > 0);
  if (measured.length === 0) {
    throw new UserError(KNOB_TEXT.peerBwUnmeasured, ExitCode.Usage);
  }
  return Math.min(...measured);
}
