// The machines of a profile: the host, and each node of a job on several.
import { z } from 'zod';
import { nonneg } from './numbers.js';

/**
 * Which machine of the job a rank ran on, as its start event said. Ranks are numbered across the whole job (torchrun's
 * RANK), so a rank number names one rank whatever its node.
 */
export const NodeIdentitySchema = z.object({
  /** Host name of the machine. */
  hostname: z.string(),
  /** The machine's rank among the job's nodes (torchrun GROUP_RANK or NODE_RANK, Slurm SLURM_NODEID; 0 on one node). */
  nodeRank: z.number().int().nonnegative(),
});
export type NodeIdentity = z.infer<typeof NodeIdentitySchema>;

/** Facts about one machine: the profile's `host`, and each entry of `nodes`. */
export const HostSchema = z.object({
  /** Host name. */
  hostname: z.string(),
  /** CPU model name. */
  cpuModel: z.string(),
  /** Logical CPUs. */
  cpus: z.number().int().positive(),
  /** Physical memory, bytes. */
  memBytes: nonneg(),
  /** Operating system (distribution and release). */
  os: z.string(),
  /** Kernel release. */
  kernel: z.string(),
  /** GPUs nvidia-smi lists (memory null when not reported). */
  gpus: z.array(z.object({ model: z.string(), memBytes: nonneg().nullable() })),
  /** Whether the profiler ran as root. */
  root: z.boolean(),
  /** 'v1', 'v2' or 'none'. */
  cgroup: z.string(),
  /**
   * The kernel's multi-generational LRU (/sys/kernel/mm/lru_gen/enabled): 'on', 'off', or 'absent' (not built in): with
   * 'off' or 'absent' the classic two lists run the page cache, which the what-if simulates. Absent in older profiles.
   */
  lruGen: z.enum(['on', 'off', 'absent']).optional(),
});
export type Host = z.infer<typeof HostSchema>;

/** One machine the job ran on: its identity (`hostname`, `nodeRank`, as its ranks' `node` name it) and its facts. */
export const NodeSchema = z.object({
  /** Rank of the machine among the job's nodes; its ranks' node.nodeRank. */
  nodeRank: z.number().int().nonnegative(),
  ...HostSchema.shape,
  /** A merged profile of several nodes: where that node's CLI wrote its own profile, on that node. */
  profile: z.string().optional(),
  /** A merged profile of nodes: bytes/s that node read from another node's CLI as they met (null: not measured). */
  peerBytesPerSec: z.number().nonnegative().nullable().optional(),
});
export type ProfileNode = z.infer<typeof NodeSchema>;
