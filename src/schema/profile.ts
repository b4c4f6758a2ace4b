import { z } from 'zod';
import { ModeSchema } from './events.js';
import { nonneg } from './numbers.js';
import { AnalysisSchema } from './profile-analysis.js';
import { HostSchema, NodeSchema } from './profile-host.js';
import { EstimateSchema } from './profile-measures.js';
import { ModeResultSchema, StorageProbeSchema } from './profile-run.js';
import { PROFILE_SCHEMA_VERSION } from './versions.js';

/** Version of the profile file format (in versions.ts, which loads no zod); bump on any incompatible change. */
export { PROFILE_SCHEMA_VERSION } from './versions.js';
// The profile's parts, each in its own module, importable from here as before.
export * from './profile-analysis.js';
export * from './profile-host.js';
export * from './profile-measures.js';
export * from './profile-run.js';

/** What a profile cost the user (docs/method.md, "One launch"). */
export const ProfileCostSchema = z.object({
  /** 'one-launch': every mode a block of one launch of the job; 'separate-launches': a launch a run. */
  schedule: z.enum(['one-launch', 'separate-launches']),
  /** Why the modes got a launch each; absent in one launch. */
  scheduleReason: z.string().optional(),
  /** Times the job was started, probes and sweeps included. */
  launches: z.number().int().nonnegative(),
  /** Wall time from the first launch to the last run's end (warming, eviction and start-ups included), s. */
  wallSec: nonneg(),
  /** Iterations the job ran, measured or not (the most of any rank in each launch). */
  jobIterations: z.number().int().nonnegative(),
  /** Iterations the pace ranks measured, warm-up and carried batches left out. */
  measuredIterations: z.number().int().nonnegative(),
  /** Their time, s. */
  measuredSec: nonneg(),
  /** measuredSec / wallSec. */
  measuredShare: nonneg(),
  /** profile --continue: what the blocks cost the real run they rode (docs/json-output.md, "cost.continued"). */
  continued: z
    .object({
      /** Wall time from the job's start to the blocks' end (its start-up included), s. */
      blocksSec: nonneg(),
      /** Time of the synthetic blocks' iterations: trained on replays and undone, so none of it trained the run, s. */
      syntheticSec: nonneg(),
      /** Time the training loop was held while the synthetic blocks' state was copied and put back, s. */
      snapshotSec: nonneg(),
      /** Largest copy of one process's training state (host memory), bytes. */
      snapshotBytes: nonneg(),
      /** Time between blocks while the next cache state was set (warming, eviction), the job training on, s. */
      preparationSec: nonneg(),
      /** The cold blocks' iterations over the same iterations at the cached pace, s. */
      coldExtraSec: nonneg(),
      /** syntheticSec + snapshotSec + preparationSec + coldExtraSec: the run's time the profile added, at most. */
      extraSec: nonneg(),
      /** Synthetic blocks whose state could not be held: they trained on real batches and are not in the profile. */
      refusedBlocks: z.array(z.object({ label: z.string(), reason: z.string() })),
      /** Wall time of the whole run, its start to its end; absent while it runs. */
      runSec: nonneg().optional(),
      /** The job's own exit code (null: ended by a signal); absent while it runs. */
      jobExitCode: z.number().int().nullable().optional(),
      /** The signal that ended the job, or null; absent while it runs. */
      jobSignal: z.string().nullable().optional(),
    })
    .optional(),
});

/**
 * The epochs after the first (docs/method.md, "The first epoch and the rest"): the split and the verdict are of the
 * cold pace, which only the first epoch keeps where the page cache holds the dataset after it.
 */
export const LaterEpochsSchema = z.object({
  /** The cache the dataset gets as the job runs (M0 of the what-if), bytes, and where that figure comes from. */
  cacheBytes: nonneg(),
  cacheSource: z.string(),
  /** Whether it holds the whole dataset: the epochs after the first read nothing from storage. */
  holdsDataset: z.boolean(),
  /**
   * 'measured': the cached mode's pace (the cache holds the dataset); 'predicted': the what-if's steady state at
   * cacheBytes.
   */
  basis: z.enum(['measured', 'predicted']),
  /** Bytes-weighted hit ratio of those epochs: 1 where the cache holds the dataset. */
  hitRatio: z.number().min(0).max(1),
  /** The cache policy a prediction assumed; absent where measured. */
  policy: z.string().optional(),
  /**
   * Their iteration time (checkpoint and boundary stalls included, as in analysis.iterMs), prep and fetch stall, ms; a
   * prediction has no interval.
   */
  iterMs: EstimateSchema,
  prepStallMs: EstimateSchema.nullable(),
  fetchStallMs: EstimateSchema,
  /**
   * What bounds them: a stall of 10% of the iteration or more names it, the largest, as the verdict does (checkpoint
   * and boundary stalls are the same in every epoch).
   */
  bound: z.enum(['compute', 'prep', 'fetch', 'checkpoint', 'boundary', 'unknown']),
  /** One line: what bounds them, on what basis, and the first epoch's fetch stall apart. */
  text: z.string(),
});
export type LaterEpochs = z.infer<typeof LaterEpochsSchema>;

/** A FUSE mount whose daemon was metered (its sockets' received bytes, counted in the kernel). */
export const FuseMountSchema = z.object({
  /** The file-system type as /proc/self/mountinfo names it (fuse.s3fs, fuse.rclone). */
  type: z.string(),
  /** The mount's source, without a user:password@ part. */
  source: z.string(),
  mountPoint: z.string(),
  /** The daemon serving the mount: its program (never its arguments, which may hold keys), pid and cgroup v2 group. */
  daemon: z.object({
    program: z.string(),
    pid: z.number().int().positive(),
    cgroup: z.string(),
    otherProcesses: z.number().int().nonnegative(),
  }),
});

const FETCHED = {
  /** Where uncached bytes came from, as the source said (absent in older profiles: sourceOfProfile derives it). */
  fetchesFrom: z.enum(['storage', 'network']).optional(),
};

/**
 * The data a profile ran on, as one value tagged by the source that served it (src/profile/data-sources/): what
 * validate needs to open it again, and never a credential. Older profiles lack it: sourceOfProfile
 * (schema/profile-source.ts) derives it from options and dataset.
 */
export const DataSourceRecordSchema = z.discriminatedUnion('kind', [
  z.object({
    /** Files on this machine's disks, read through its page cache. */
    kind: z.literal('files'),
    ...FETCHED,
    /** The --data folders (or files), absolute. */
    roots: z.array(z.string()),
    /** Whether the global drop_caches made the cold mode cold. */
    dropCaches: z.boolean(),
  }),
  z.object({
    /** Files on a FUSE mount, read by its daemon. */
    kind: z.literal('fuse'),
    ...FETCHED,
    roots: z.array(z.string()),
    dropCaches: z.boolean(),
    /** The mount and its metered daemon; null when the daemon could not be metered (the proofs then say why). */
    mount: FuseMountSchema.nullable(),
  }),
  z.object({
    /** Files on NFS: uncached bytes come over the network from its server, whose own cache is not controlled. */
    kind: z.literal('nfs'),
    ...FETCHED,
    roots: z.array(z.string()),
    dropCaches: z.boolean(),
    /** The file-system type (nfs, nfs4), the server and its export as mounted (server:/export), and where. */
    type: z.string(),
    server: z.string(),
    mountPoint: z.string(),
  }),
  z.object({
    /** Objects in S3-compatible storage or files at HTTP(S) URLs, fetched through the metering proxy. */
    kind: z.literal('remote'),
    ...FETCHED,
    /** --remote as given, without user name, password or query. */
    url: z.string(),
    /** --endpoint without credentials, or null. */
    endpoint: z.string().nullable(),
    /** The job's own cache folder (--job-cache), kept empty in the cold mode; null: none named. */
    jobCache: z.string().nullable(),
    /** Where the cold mode's requests were counted (--net-meter). */
    netMeter: z.enum(['client', 'proxy']),
  }),
]);
export type DataSourceRecord = z.infer<typeof DataSourceRecordSchema>;

export const ProfileSchema = z.object({
  schemaVersion: z.literal(PROFILE_SCHEMA_VERSION),
  tool: z.object({ name: z.string(), version: z.string() }),
  /** ISO time the profile was started. */
  createdAt: z.string(),
  /** complete: all requested modes ran; partial: a mode failed or was interrupted. */
  status: z.enum(['complete', 'partial']),
  /** A short name for the job (default: the command's script name). */
  jobName: z.string(),
  /** The command as run (argument array). */
  command: z.array(z.string()),
  options: z.object({
    /** Dataset roots. */
    data: z.array(z.string()),
    /** Remote data as named (--remote, --endpoint), without credentials or query; absent for local files. */
    remote: z
      .object({
        url: z.string(),
        endpoint: z.string().nullable(),
        jobCache: z.string().nullable().optional(),
        netMeter: z.enum(['client', 'proxy']).optional(),
      })
      .optional(),
    /** Target relative half-width of the per-iteration time. */
    precision: nonneg(),
    /** Iteration budget per mode. */
    maxIterations: z.number().int().positive(),
    /** Per-mode timeout, s. */
    timeoutSec: nonneg(),
    /** Storage read throttle, bytes/s, or null. */
    storageBwBytesPerSec: nonneg().nullable(),
    /** Whether the global drop_caches was used. */
    dropCaches: z.boolean(),
    /** Modes requested, in run order. */
    modes: z.array(ModeSchema),
    /** Runs of each mode, in mirrored order (absent in older profiles: one). */
    passes: z.number().int().positive().optional(),
    /**
     * A profile over several nodes, one CLI on each, kept in step by a coordinator that one of them hosts; absent for
     * one node.
     */
    nodes: z
      .object({
        /** Nodes in the job. */
        count: z.number().int().min(2),
        /** Where the CLIs met, HOST:PORT. */
        coordinator: z.string(),
        /** Whether the CLI that wrote this profile hosted the coordinator. */
        hostsCoordinator: z.boolean(),
        /** True for the merged profile of every node (written by the coordinator's CLI); absent on a node's own. */
        merged: z.literal(true).optional(),
        /**
         * Bytes/s this node read from another node's CLI as they met (a 32 MiB bulk, a small one's time taken off; the
         * coordinator's: the slowest from any node); null: not measured; absent before it was.
         */
        peerBytesPerSec: z.number().nonnegative().nullable().optional(),
      })
      .optional(),
  }),
  /**
   * The data, as one value tagged by its source; absent in older profiles (read them through sourceOfProfile, which
   * derives it from options.data, options.remote, options.dropCaches, dataset.remote and dataset.mount, still written
   * for the readers of those).
   */
  source: DataSourceRecordSchema.optional(),
  /**
   * The machine the profiler ran on and ran the job on (with one node, the same as nodes[0]; kept for readers of older
   * profiles).
   */
  host: HostSchema,
  /**
   * Every machine the job ran on, by node rank, each with its facts; a rank's
   * `node` names its entry. One today: the machine the CLI ran the job on.
   * Absent in older profiles: one node, node rank 0, with `host`'s facts.
   */
  nodes: z.array(NodeSchema).min(1).optional(),
  dataset: z.object({
    roots: z.array(z.string()),
    files: z.number().int().nonnegative(),
    bytes: nonneg(),
    meanFileBytes: nonneg(),
    /** File size quantiles, bytes. */
    fileBytesQuantiles: z.object({ p10: nonneg(), p50: nonneg(), p90: nonneg(), max: nonneg() }),
    /** Block device (major:minor) holding the dataset, when known. */
    device: z.string().nullable(),
    /** Whether the dataset fits in memory available for the page cache. */
    fitsInMemory: z.boolean(),
    /**
     * Log-spaced file-size histogram (optional: profiles before whatif lack it; the model then assumes every file is
     * meanFileBytes).
     */
    fileBytesHistogram: z
      .object({
        /** Buckets per octave of size. */
        bucketsPerOctave: z.number().int().positive(),
        /** Non-empty buckets, ascending: [lowBytes, highBytes) holds `files` files of `bytes` bytes in total. */
        buckets: z.array(
          z.object({ lowBytes: nonneg(), highBytes: nonneg(), files: z.number().int().nonnegative(), bytes: nonneg() }),
        ),
      })
      .optional(),
    /**
     * Memory the page cache could give the dataset when profiled (90% of MemAvailable, or less under a memory cgroup
     * limit), bytes; optional, null when unknown.
     */
    memoryBudgetBytes: nonneg().nullable().optional(),
    /** Where memoryBudgetBytes came from: MemAvailable or the memory cgroup limiting it (absent in older profiles). */
    memoryBudgetSource: z.string().optional(),
    /** Remote data: where it was fetched from (host only: no credentials, no query); absent for local files. */
    remote: z
      .object({
        /** 's3' (object storage) or 'http' (files or shards at URLs). */
        kind: z.enum(['s3', 'http']),
        /** The data as named: s3://bucket/prefix at the endpoint's host, or the URL pattern. */
        location: z.string(),
        /** http or https: over https the proxy sees tunnels, not requests. */
        protocol: z.enum(['http', 'https']),
        /** The origins (host:port) the metering proxy counted as the data's. */
        origins: z.array(z.string()),
        /** The profiler's cache that answered the cached mode (under the profile's artefacts), emptied at the end. */
        cacheDir: z.string().nullable(),
        /**
         * Samples in one object where objects are tar shards (counted in the first shard, as WebDataset groups members
         * by key); null: one object, one sample.
         */
        samplesPerObject: z.number().positive().nullable().optional(),
        /** The job's own cache folder (--job-cache), kept empty in the cold mode; null or absent: none named. */
        jobCacheDir: z.string().nullable().optional(),
      })
      .optional(),
    /** Data on a FUSE mount whose daemon was metered (its sockets' bytes, counted in the kernel); absent otherwise. */
    mount: FuseMountSchema.optional(),
  }),
  /** Per-mode results; a partial profile lacks some. */
  modes: z.object({
    synthetic: ModeResultSchema.optional(),
    cached: ModeResultSchema.optional(),
    cold: ModeResultSchema.optional(),
  }),
  /** The cached mode again at fewer CPUs (profile --cpus), to fit how prep scales with CPUs. */
  cpuSweep: z.array(ModeResultSchema).optional(),
  /**
   * The cached mode again at other loader worker counts (profile --workers), each pooled over its runs in the
   * drift-cancelling schedule; workersAsked says which count. Only counts the job was seen to apply are kept.
   */
  workersSweep: z.array(ModeResultSchema).optional(),
  /**
   * The cold mode again with a fixed share of the dataset held in the page cache (profile --overlap), to measure how
   * reads and pre-processing overlap.
   */
  overlapProbe: ModeResultSchema.extend({
    /** Share of the dataset's bytes held resident, 0..1. */
    residentShare: z.number().min(0).max(1),
  }).optional(),
  /**
   * The dataset's storage measured directly after the modes (no --storage-bw throttle): a short, bounded read of
   * evicted dataset files at the job's read concurrency. Its bandwidth is the storage's own, where the cold mode only
   * shows what the job asked for when storage never set its pace. Absent when a throttle was set (its rate is the
   * bandwidth), without a cold mode, and in older profiles.
   */
  storageProbe: StorageProbeSchema.optional(),
  /** The differential split; null when no mode finished. */
  analysis: AnalysisSchema.nullable(),
  /** The epochs after the first; null where the modes it needs are missing; absent in older profiles. */
  laterEpochs: LaterEpochsSchema.nullable().optional(),
  /** Messages about what could not be done (no throttle permission, ...). */
  warnings: z.array(z.string()),
  /**
   * What was done about the job's own outputs (checkpoints to scratch files, trackers off), in one line; absent in
   * older profiles.
   */
  outputs: z.string().optional(),
  /**
   * What the profile cost: its schedule, launches of the job, wall time and the share of it spent measuring; absent in
   * older profiles.
   */
  cost: ProfileCostSchema.optional(),
  /**
   * The writer's seal, always the last field: 'sha256:' and the hex SHA-256 of the file's text without this field,
   * keyed by the tool's version and the compiled source of this schema (src/store/profile-seal.ts). A file whose seal
   * matches was validated by this very build when written, so a reader skips validating it again; any other file is
   * validated in full. Readers drop it: a profile in memory carries no seal.
   */
  integrity: z.string().optional(),
});
export type Profile = z.infer<typeof ProfileSchema>;
