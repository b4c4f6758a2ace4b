// One run (or block) of a mode as the profile keeps it: its ranks, passes, subset, network use, stages and stall.
import { z } from 'zod';
import {
  CheckpointEventSchema,
  EpochEventSchema,
  LoaderSettingsSchema,
  ModeSchema,
  StageTotalSchema,
} from './events.js';
import { nonneg } from './numbers.js';
import { NodeIdentitySchema } from './profile-host.js';
import {
  EstimateSchema,
  IterationSchema,
  IterationSummarySchema,
  ResourceSampleSchema,
  StateProofSchema,
} from './profile-measures.js';

/** A checkpoint save as the profile keeps it: the event (docs/protocol.md) without v, type and rank. */
export const CheckpointRecordSchema = CheckpointEventSchema.omit({ v: true, type: true, rank: true });
export type CheckpointRecord = z.infer<typeof CheckpointRecordSchema>;

/** An epoch start as the profile keeps it: the event (docs/protocol.md) without v, type and rank. */
export const EpochRecordSchema = EpochEventSchema.omit({ v: true, type: true, rank: true });
export type EpochRecord = z.infer<typeof EpochRecordSchema>;

export const RankResultSchema = z.object({
  /** Rank of the process, numbered across all the job's nodes. */
  rank: z.number().int().nonnegative(),
  /** The machine the rank ran on (absent in older profiles: node 0, the profile's host). */
  node: NodeIdentitySchema.optional(),
  /** pid of the process that wrote the events. */
  pid: z.number().int().nonnegative(),
  /** Loader workers reported by the job. */
  workers: z.number().int().nonnegative().nullable(),
  /** The training loader's settings as the job reported them (absent: not reported, or an older profile). */
  loader: LoaderSettingsSchema.optional(),
  /**
   * CPU time of the training process itself (collation, pin memory, kernel launches; not its loader workers) per sample
   * over the measured window, ms; null when the job did not report it (processCpuMs).
   */
  mainCpuMsPerSample: nonneg().nullable().optional(),
  /** Raw iterations as reported. */
  iterations: z.array(IterationSchema),
  /** Statistics over the measured window; null with too few iterations. */
  summary: IterationSummarySchema.nullable(),
  /**
   * Checkpoint saves the job reported (the checkpoint event without its envelope); absent when none, and in older
   * profiles.
   */
  checkpoints: z.array(CheckpointRecordSchema).optional(),
  /**
   * The training loader's epoch starts the job reported (the epoch event without its envelope); absent when none, and
   * in older profiles.
   */
  epochs: z.array(EpochRecordSchema).optional(),
});
export type RankResult = z.infer<typeof RankResultSchema>;

/**
 * The job's first batch in one run: seconds from the job's start to its first batch (the last rank's), the part before
 * its loader was first asked (the job's own start-up: imports, model, workers not yet asked), and the loader's first
 * wait (its workers' start, the first batch's fetch and prep).
 */
export const FirstBatchSchema = z.object({
  sec: nonneg(),
  startupSec: nonneg(),
  firstWaitSec: nonneg(),
});
export type FirstBatch = z.infer<typeof FirstBatchSchema>;

/** One run of a mode, when the mode was measured in several (the drift-cancelling schedule). */
export const PassSchema = z.object({
  /** The run's folder under the profile's artefacts (cached, cached-2). */
  label: z.string(),
  /** ms since epoch. */
  startedAt: nonneg(),
  /** Wall time of the run, s. */
  wallSec: nonneg(),
  /** Middle of its measured window (or of the run), ms since epoch: where it sits on the drift line. */
  midAt: nonneg(),
  /** How the run ended. */
  status: z.enum(['ok', 'failed', 'interrupted']),
  /** Why its measurement stopped. */
  stopReason: z.string(),
  /** Whether the run proved its cache state. */
  proven: z.boolean(),
  /** Iterations in its measured window (pace-setting rank). */
  measuredIterations: z.number().int().nonnegative(),
  /** Its per-iteration time, wait and step, within-run 95% intervals; null with too few iterations. */
  iterMs: EstimateSchema.nullable(),
  waitMs: EstimateSchema.nullable(),
  computeMs: EstimateSchema.nullable(),
  /** Whole blocks behind those intervals. */
  blocks: z.number().int().nonnegative(),
  /** Its first batch; absent in older profiles. */
  firstBatch: FirstBatchSchema.nullable().optional(),
});
export type Pass = z.infer<typeof PassSchema>;

/**
 * The resident subset a cached mode ran on, when the dataset did not fit or would take too long to warm (absent in
 * older profiles).
 */
export const SubsetSchema = z.object({
  /** Why a subset: the dataset does not fit in the memory budget, or warming it all would take longer than the mode. */
  reason: z.enum(['does-not-fit', 'warm-time']),
  /** One line on how the files were chosen. */
  how: z.string(),
  /** Files in the subset. */
  files: z.number().int().nonnegative(),
  /** Bytes of those files. */
  bytes: nonneg(),
  /** Files of the whole dataset. */
  datasetFiles: z.number().int().nonnegative(),
  /** Bytes of the whole dataset. */
  datasetBytes: nonneg(),
  /** Seed of the permutation whose prefix is the subset. */
  seed: z.number().int().nonnegative(),
  /** The memory budget the subset was sized against, bytes, or null when it was cut by warm time only. */
  budgetBytes: nonneg().nullable(),
  /** Seconds spent warming the subset. */
  warmSec: nonneg(),
  /**
   * Samples the job said it kept after restricting its dataset to the subset (start event subsetFiles); null when it
   * never said.
   */
  jobSamples: z.number().int().nonnegative().nullable(),
  /** What the job said about the restriction (start event subsetNote), if anything. */
  jobNote: z.string().optional(),
});
export type Subset = z.infer<typeof SubsetSchema>;

/** A direct read probe of the dataset's storage (src/system/probes/read-probe.ts). */
export const StorageProbeSchema = z.object({
  /** Storage read bandwidth measured: bytes storage delivered over the read time, bytes/s. */
  bytesPerSec: nonneg(),
  /** Bytes the probe's readers asked for. */
  bytesRead: nonneg(),
  /** Bytes storage delivered (/proc/self/io read_bytes); null when not readable. */
  storageBytes: nonneg().nullable(),
  /** Dataset files read. */
  files: z.number().int().nonnegative(),
  /** Wall time of the reads, s. */
  sec: nonneg(),
  /** Readers at once: the job's loader workers over its ranks, at most the reader threads this process has. */
  concurrency: z.number().int().positive(),
  /** Bytes per read request. */
  requestBytes: z.number().int().positive(),
  /**
   * Remote data: the median time from a request to its first byte in the probe, ms (the network's bandwidth is its rate
   * less that wait); absent for files and older profiles.
   */
  firstByteMs: nonneg().optional(),
  /**
   * Remote data: the median time to a first byte of a few requests sent one at a time before the others, ms: the
   * network's latency, with no response ahead of it to wait behind (on a full link the loaded firstByteMs is mostly
   * that queueing); absent for files and older profiles.
   */
  idleFirstByteMs: nonneg().optional(),
  /** True when storage delivered at least 90% of the bytes read (the files were really cold). */
  proven: z.boolean(),
  /** One line on the proof. */
  reason: z.string(),
});
export type StorageProbe = z.infer<typeof StorageProbeSchema>;

/** What a run fetched over the network, as the metering proxy saw it (remote data). */
export const NetworkUseSchema = z.object({
  /** Requests for the data seen whole (plain HTTP), and CONNECT tunnels to its origins (HTTPS: bytes, not requests). */
  requests: z.number().int().nonnegative(),
  tunnels: z.number().int().nonnegative(),
  /** Bytes of the data the origin sent, and those answered from the profiler's cache. */
  originBytes: nonneg(),
  cacheBytes: nonneg(),
  cacheHits: z.number().int().nonnegative(),
  /** Bytes hosts other than the data's origins sent (model downloads, telemetry); what the job sends is not counted. */
  otherBytes: nonneg(),
  /** Responses of the data by HTTP status. */
  statuses: z.record(z.string(), z.number().int().nonnegative()),
  /** Connections to the origin that failed, and the last failure (host and error code). */
  failures: z.number().int().nonnegative(),
  lastFailure: z.string().nullable(),
  /** Time to the first byte of a response, ms, over the run's requests answered by the origin; null when none. */
  firstByteMs: z.object({ p50: nonneg(), p95: nonneg(), p99: nonneg(), n: z.number().int().positive() }).nullable(),
  /**
   * Time from a request's arrival to its last byte, ms, over the same requests (mean and quantiles); null when none;
   * absent in older profiles.
   */
  requestMs: z
    .object({ mean: nonneg(), p50: nonneg(), p95: nonneg(), p99: nonneg(), n: z.number().int().positive() })
    .nullable()
    .optional(),
  /** Requests (or tunnels) in flight at once: the mean over the run, and the most. */
  meanInFlight: nonneg(),
  maxInFlight: z.number().int().nonnegative(),
  /** The cap on the data's bytes during the run, bytes/s, or null. */
  capBytesPerSec: nonneg().nullable(),
  /**
   * Where the requests were counted: at the profiler's proxy, or in the job's own HTTP clients (Python's http.client:
   * the cold mode reaching its origin directly). Absent in older profiles: the proxy.
   */
  meter: z.enum(['proxy', 'client']).optional(),
});
export type NetworkUse = z.infer<typeof NetworkUseSchema>;

/** The stage times the training loader's processes reported over a run, summed over the processes. */
export const PrepStageTotalsSchema = z.object({
  /** Loader processes that reported (the workers; the training process without workers). */
  processes: z.number().int().nonnegative(),
  /** Samples in the batches they built over the run. */
  samples: z.number().int().nonnegative(),
  /** Batches they built. */
  batches: z.number().int().nonnegative(),
  /** Wall time of those fetches, ms. */
  fetchMs: nonneg(),
  /** The fetching threads' CPU time over them, ms. */
  fetchCpuMs: nonneg(),
  /** Each stage, its wall time exclusive of the stages inside it. */
  stages: z.array(StageTotalSchema),
});
export type PrepStageTotals = z.infer<typeof PrepStageTotalsSchema>;

/**
 * A block whose figures cannot stand (analysis/stalls.ts): its fetches stalled, its job stopped making progress, or
 * --timeout ended it before it measured enough. Its state is not proven and the split leaves it out.
 */
export const StallSchema = z.object({
  /**
   * no-bytes: no fetched byte while the job waited on data; request-errors: requests for the data failed; hung: no
   * iteration for many times the median (the watchdog ended the block); timeout: --timeout ended it too soon.
   */
  cause: z.enum(['no-bytes', 'request-errors', 'hung', 'timeout', 'ended']),
  /** When it began, s into the block. */
  atSec: nonneg(),
  /** no-bytes: how long nothing came, s. */
  silentSec: nonneg().optional(),
  /** One line naming the cause and its time. */
  text: z.string(),
});
export type Stall = z.infer<typeof StallSchema>;

export const ModeResultSchema = z.object({
  mode: ModeSchema,
  /** ok: enough iterations measured; failed: the job failed; interrupted: stopped by the user. */
  status: z.enum(['ok', 'failed', 'interrupted']),
  /** Why the measurement stopped. */
  stopReason: z.enum(['precision', 'budget', 'job-exit', 'timeout', 'interrupted', 'job-failed', 'no-iterations']),
  /** Exit code of the job (null when killed by a signal). */
  jobExitCode: z.number().int().nullable(),
  /** Signal that ended the job, if any. */
  jobSignal: z.string().nullable(),
  /** ms since epoch. */
  startedAt: nonneg(),
  /** Wall time of the mode, s. */
  wallSec: nonneg(),
  /** Cache-state evidence. */
  state: StateProofSchema,
  /** Per-rank results. */
  ranks: z.array(RankResultSchema),
  /** Rank setting the pace (slowest per-iteration time). */
  paceRank: z.number().int().nonnegative().nullable(),
  /** Summary of the pace-setting rank; null when too few iterations. */
  summary: IterationSummarySchema.nullable(),
  /** Resource time series. */
  resources: z.array(ResourceSampleSchema),
  /** CPU seconds of the job tree per consumed sample over the run. */
  jobCpuSecPerSample: nonneg().nullable(),
  /** Mean storage read throughput of the job tree over the run, bytes/s. */
  storageReadBytesPerSec: nonneg().nullable(),
  /** Lines of the events files that did not parse. */
  badEventLines: z.number().int().nonnegative(),
  /** Where the job's output was saved. */
  logs: z.object({ stdout: z.string(), stderr: z.string() }),
  /** CPU affinity the mode ran with (null: unrestricted). */
  cpus: z.array(z.number().int().nonnegative()).nullable().default(null),
  /** CPU seconds the profiler used in the mode (sampling, keeping the dataset evicted); absent in older profiles. */
  profilerCpuSec: nonneg().optional(),
  /**
   * Of profilerCpuSec, the CPU seconds each component of the profiler charged to its ledger (sampler, events, keeper,
   * meter, warming, eviction; see system/kernel/cpu-ledger.ts); absent in older profiles.
   */
  profilerCpu: z.record(z.string(), nonneg()).optional(),
  /** Cached mode on a resident subset of the dataset: which, and why (absent when it ran on the whole dataset). */
  subset: SubsetSchema.optional(),
  /**
   * The runs this result pools, in the order they ran, when the mode was measured more than once (profile's default
   * schedule); absent for one run. The figures above are then the runs' equal-weight means, with intervals that include
   * the run-to-run variation.
   */
  passes: z.array(PassSchema).optional(),
  /** The loader workers this run asked the job for (DSA_NUM_WORKERS, profile --workers); absent: the script's own. */
  workersAsked: z.number().int().nonnegative().optional(),
  /** Remote data: what the run fetched over the network; absent for local files. */
  network: NetworkUseSchema.optional(),
  /**
   * The job's first batch (of pooled runs: their mean); null when no rank reported an iteration; absent in older
   * profiles.
   */
  firstBatch: FirstBatchSchema.nullable().optional(),
  /**
   * Prep taken apart: the training loader's processes' stage times over the run (python/ds_analyzer/_stages.py); absent
   * when no loader process reported them.
   */
  prepStages: PrepStageTotalsSchema.optional(),
  /** The block stalled (its fetches, or its job): not proven, left out of the split; absent when it did not. */
  stalled: StallSchema.optional(),
  /** A block of a launch that measured several modes (docs/method.md, "One launch"); absent for a launch of its own. */
  block: z
    .object({
      /** Its place in the launch, from 0. */
      index: z.number().int().nonnegative(),
      /**
       * Iterations at its start left out as carried over from the previous block's state (the pace rank's; the loader's
       * batches in flight at the switch).
       */
      carriedIterations: z.number().int().nonnegative(),
    })
    .optional(),
});
export type ModeResult = z.infer<typeof ModeResultSchema>;
