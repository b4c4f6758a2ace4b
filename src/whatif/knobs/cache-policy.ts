/**
 * --cache-policy: which cache holds the dataset (Scenario.cachePolicy): the policy of h(M), the page cache's two lists
 * or MinIO's min(1, M / D); with `partitioned` and --nodes, CoorDL's cache spread over the nodes (Scenario.partitioned,
 * each node's part never evicting: min(1, N M / D)).
 */
import { ExitCode, UserError } from '../../errors.js';
import { CACHE_POLICIES, type CachePolicy } from '../cache-policy.js';
import type { Knob } from './knob.js';
import { KNOB_TEXT } from './knob-text.js';

/** The policies the flag takes: the model's, and the partitioned cache over several nodes. */
const ASKABLE = [...CACHE_POLICIES, 'partitioned'] as const;

export const CACHE_POLICY_KNOB: Knob<CachePolicy | 'partitioned'> = {
  name: 'cache-policy',
  flag: {
    syntax: '--cache-policy <policy>',
    help:
      `cache that holds the dataset: ${ASKABLE.join(' | ')} (MinIO: never evicts, as in CoorDL; partitioned, ` +
      "with --nodes: the dataset spread over the nodes' caches, a miss fetched from the peer that holds it, CoorDL)",
    defaultValue: 'page-cache',
  },
  field: 'cachePolicy',
  reads: ['nodes'],
  parse: (text, asked) => {
    if (text === 'partitioned') {
      if ((asked.nodes ?? 1) < 2) {
        throw new UserError(KNOB_TEXT.partitionedNeedsNodes, ExitCode.Usage);
      }
      return 'partitioned';
    }
    // The default, the page cache, is the profiled one: not a change.
    if (text === 'page-cache') return undefined;
    if (!(CACHE_POLICIES as readonly string[]).includes(text)) {
      throw new UserError(KNOB_TEXT.unknownPolicy(text, ASKABLE), ExitCode.BadValue);
    }
    return text as CachePolicy;
  },
  set: (query, policy) => {
    if (policy !== 'partitioned') {
      query.cachePolicy = policy;
      return;
    }
    // Each node's part of the dataset stays: a cache that never evicts.
    query.partitioned = true;
    query.cachePolicy = 'minio';
  },
  // Named so in the answer: `--cache-policy partitioned` sets both.
  fetchStage: { cachePolicy: '--cache-policy', partitioned: '--cache-policy partitioned' },
};
