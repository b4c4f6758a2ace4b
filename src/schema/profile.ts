import { z } from 'zod';
import {
  CheckpointEventSchema,
  EpochEventSchema,
  LoaderSettingsSchema,
  ModeSchema,
  StageTotalSchema,
} from './events.js';
import { PROFILE_SCHEMA_VERSION } from './versions.js';

/** Version of the profile file format (in versions.ts, which loads no zod); bump on any incompatible change. */
export { PROFILE_SCHEMA_VERSION } from './versions.js';

const finite = () => z.number().finite();
const nonneg = () => z.number().finite().nonnegative();

/** A mean with its 95% confidence half-width; `proven` false when built on an unproven mode. */
export const EstimateSchema = z.object({
  /** Point estimate. */
  mean: finite(),
  /** Half-width of the 95% confidence interval (same unit); null when it cannot be computed. */
  halfWidth: nonneg().nullable(),
  /** False when the estimate rests on a mode whose cache state was not proven. */
  proven: z.boolean().default(true),
});
export type Estimate = z.infer<typeof EstimateSchema>;

/** One training iteration as the job reported it. */
export const IterationSchema = z.object({
  /** Iteration index within its process. */
  i: z.number().int().nonnegative(),
  /** Wall-clock time the batch arrived, ms since epoch. */
  t: nonneg(),
  /** Time the loop waited for the batch, ms. */
  waitMs: nonneg(),
  /** Time from the batch to the next request, ms. */
  computeMs: nonneg(),
  /** Samples in the batch. */
  samples: z.number().int().nonnegative(),
  /** Bytes behind the batch, when reported. */
  bytes: nonneg().optional(),
  /** CPU time of the process that wrote the events so far (not its loader workers), ms, when reported. */
  processCpuMs: nonneg().optional(),
  /**
   * Set on the iterations detected as warm-up and discarded (profiles before it: the first summary.warmupIterations).
   */
  warmup: z.literal(true).optional(),
});
export type Iteration = z.infer<typeof IterationSchema>;

/** Statistics of one iteration series after warm-up removal. */
export const IterationSummarySchema = z.object({
  /**
   * Iterations detected as warm-up and discarded (a mode pooled over runs: the sum of its runs', each at the start of
   * its run; the iterations' warmup flags say which).
   */
  warmupIterations: z.number().int().nonnegative(),
  /** Iterations in the measured window. */
  measuredIterations: z.number().int().nonnegative(),
  /** Iterations per block used for the confidence intervals (at least the loader's workers). */
  blockSize: z.number().int().positive(),
  /** Whole blocks in the measured window. */
  blocks: z.number().int().nonnegative(),
  /** Per-iteration time (wait + compute), ms: total time over iterations. */
  iterMs: EstimateSchema,
  /** Per-iteration wait for data, ms. */
  waitMs: EstimateSchema,
  /** Per-iteration time between batches, ms. */
  computeMs: EstimateSchema,
  /** Mean samples per iteration. */
  samplesPerIter: nonneg(),
  /** Samples per second over the measured window. */
  samplesPerSec: nonneg(),
  /** Median per-iteration time, ms (shown for contrast; not used for the split). */
  medianIterMs: nonneg(),
  /** Relative precision reached: halfWidth / mean of iterMs. */
  relativePrecision: nonneg().nullable(),
});
export type IterationSummary = z.infer<typeof IterationSummarySchema>;

/** One sample of machine and job resources. */
export const ResourceSampleSchema = z.object({
  /** ms since epoch. */
  t: nonneg(),
  /** Whole-machine CPU utilisation, 0..100 (all cores). */
  cpuPct: nonneg(),
  /** CPU seconds consumed so far by the job's process tree. */
  jobCpuSec: nonneg(),
  /** Processes in the job's tree. */
  jobProcesses: z.number().int().nonnegative(),
  /** Bytes read from storage so far by the job's tree (/proc/PID/io read_bytes). */
  jobReadBytes: nonneg(),
  /**
   * Bytes the job's tree sent to storage so far (/proc/PID/io write_bytes: checkpoints, logs, anything it writes);
   * absent in older profiles.
   */
  jobWriteBytes: nonneg().optional(),
  /**
   * Bytes of the data fetched so far by the data source's own meter, where it is not read_bytes (remote data: bytes its
   * origin sent through the proxy); absent for local files.
   */
  fetchedBytes: nonneg().optional(),
  /** Disk read throughput of the dataset's device over the last interval, bytes/s. */
  diskReadBytesPerSec: nonneg(),
  /** Page cache size (Cached in /proc/meminfo), bytes. */
  pageCacheBytes: nonneg(),
  /** Mean GPU utilisation, 0..100, when nvidia-smi exists. */
  gpuUtilPct: nonneg().optional(),
  /** GPU memory used, bytes, summed over GPUs, when nvidia-smi exists. */
  gpuMemBytes: nonneg().optional(),
  /** Each GPU's reading (nvidia-smi's index), when nvidia-smi exists; absent in older profiles. */
  gpus: z
    .array(
      z.object({
        /** The GPU's index as nvidia-smi numbers it. */
        index: z.number().int().nonnegative(),
        /** Utilisation, 0..100; null when the GPU does not report it. */
        utilPct: nonneg().nullable(),
        /** Memory used, bytes; null when the GPU does not report it. */
        memBytes: nonneg().nullable(),
      }),
    )
    .optional(),
});
export type ResourceSample = z.infer<typeof ResourceSampleSchema>;

/** Evidence that a mode ran in the cache state it claims. */
export const StateProofSchema = z.object({
  /** True when the evidence supports the claimed state. */
  proven: z.boolean(),
  /** One line on why (or why not). */
  reason: z.string(),
  /** Dataset bytes resident in the page cache just before the job started. */
  residentBytesBefore: nonneg(),
  /** Dataset bytes in total. */
  datasetBytes: nonneg(),
  /** Bytes the job's whole process tree read from storage during the mode. */
  readBytes: nonneg().nullable(),
  /** Bytes of samples the job consumed (reported, or samples x mean file size). */
  consumedBytes: nonneg(),
  /** Samples behind consumedBytes (the same window); absent in older profiles. */
  consumedSamples: nonneg().optional(),
  /** readBytes / consumedBytes. */
  readFraction: nonneg().nullable(),
  /** How readBytes was measured. */
  readBytesSource: z.string(),
  /**
   * Cold mode: file pages on the active list besides the dataset's when it
   * started (the job's mapped libraries, other programs' files): `bytes`, and
   * the memory cgroup's or the machine's counter it came from (`source`). The
   * what-if's simulated kernel counts them in the active list. Absent in older
   * profiles and where neither counter could be read.
   */
  otherActiveFile: z.object({ bytes: nonneg(), source: z.string() }).optional(),
  /** Times the cold keeper re-evicted dataset pages during the run (cold mode). */
  reEvictions: z.number().int().nonnegative().optional(),
  /**
   * How the cold keeper kept the dataset cold during the run, and what it cost (cold mode; absent in older profiles).
   */
  keeper: z
    .object({
      /**
       * 'fanotify' (root) or 'inotify': each file is evicted when the job closes it, files held open are swept slowly;
       * 'scan': every file's residency is rescanned.
       */
      mechanism: z.enum(['fanotify', 'inotify', 'scan']),
      /** CPU seconds the keeper itself used over the run. */
      cpuSec: nonneg(),
      /** cpuSec over the run's wall time: the share of one CPU the keeper took. */
      cpuShare: nonneg(),
      /** Why the keeper fell back to scanning, when it did. */
      fallbackReason: z.string().optional(),
    })
    .optional(),
});
export type StateProof = z.infer<typeof StateProofSchema>;

/**
 * Which machine of the job a rank ran on, as its start event said. Ranks are
 * numbered across the whole job (torchrun's RANK), so a rank number names one
 * rank whatever its node.
 */
export const NodeIdentitySchema = z.object({
  /** Host name of the machine. */
  hostname: z.string(),
  /**
   * Rank of the machine among the job's nodes (torchrun GROUP_RANK or NODE_RANK, Slurm SLURM_NODEID; 0 on one node).
   */
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
   * The kernel's multi-generational LRU (/sys/kernel/mm/lru_gen/enabled): 'on',
   * 'off', or 'absent' (not built in): with 'off' or 'absent' the classic two
   * lists run the page cache, which the what-if simulates. Absent in older profiles.
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
  /**
   * A merged profile of several nodes: bytes/s that node read from another node's CLI as they met (null: not measured).
   */
  peerBytesPerSec: z.number().nonnegative().nullable().optional(),
});
export type ProfileNode = z.infer<typeof NodeSchema>;

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
   * CPU time of the training process itself (collation, pin memory, kernel
   * launches; not its loader workers) per sample over the measured window, ms;
   * null when the job did not report it (processCpuMs).
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

/** One run of a mode, when the mode was measured in several (the drift-cancelling schedule). */
/**
 * The job's first batch in one run: seconds from the job's start to its first batch (the last rank's), the
 * part before its loader was first asked (the job's own start-up: imports, model, workers not yet asked),
 * and the loader's first wait (its workers' start, the first batch's fetch and prep).
 */
export const FirstBatchSchema = z.object({
  sec: nonneg(),
  startupSec: nonneg(),
  firstWaitSec: nonneg(),
});
export type FirstBatch = z.infer<typeof FirstBatchSchema>;

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
   * Remote data: the median time to a first byte of a few requests sent one at a time before the others, ms:
   * the network's latency, with no response ahead of it to wait behind (on a full link the loaded
   * firstByteMs is mostly that queueing); absent for files and older profiles.
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
  /**
   * Bytes hosts that are not the data's origins sent (a model download, telemetry); what the job sends is not counted.
   */
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
   * Where the requests were counted: at the profiler's proxy, or in the job's own HTTP clients (Python's
   * http.client: the cold mode reaching its origin directly). Absent in older profiles: the proxy.
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
 * A block whose figures cannot stand (analysis/stalls.ts): its fetches stalled, its job stopped making progress,
 * or --timeout ended it before it measured enough. Its state is not proven and the split leaves it out.
 */
export const StallSchema = z.object({
  /**
   * no-bytes: no fetched byte while the job waited on data; request-errors: requests for the data failed; hung: no
   * iteration for many times the median (the watchdog ended the block); timeout: --timeout ended it too soon.
   */
  cause: z.enum(['no-bytes', 'request-errors', 'hung', 'timeout']),
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
  /**
   * CPU seconds the profiler itself used during the mode (sampling, keeping the dataset evicted); absent in older
   * profiles.
   */
  profilerCpuSec: nonneg().optional(),
  /**
   * Of profilerCpuSec, the CPU seconds each component of the profiler charged
   * to its ledger (sampler, events, keeper, meter, warming, eviction; see
   * system/kernel/cpu-ledger.ts); absent in older profiles.
   */
  profilerCpu: z.record(z.string(), nonneg()).optional(),
  /** Cached mode on a resident subset of the dataset: which, and why (absent when it ran on the whole dataset). */
  subset: SubsetSchema.optional(),
  /**
   * The runs this result pools, in the order they ran, when the mode was
   * measured more than once (profile's default schedule); absent for one run.
   * The figures above are then the runs' equal-weight means, with intervals
   * that include the run-to-run variation.
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

/**
 * 'stall': the interval clears the naming margin and the wait for data grew;
 * 'contention': it clears the margin, but only the step grew (CPU shared with
 * the loader); 'within-noise': it does not clear the margin; 'unknown': modes missing.
 */
const StallCallSchema = z.enum(['stall', 'contention', 'within-noise', 'unknown']);
export type StallCall = z.infer<typeof StallCallSchema>;

/** The rank of a multi-rank job whose data the others wait for (analysis/straggler.ts). */
export const StragglerSchema = z.object({
  /** The mode it was judged in: the cold mode where it ran, else the cached. */
  mode: z.enum(['cached', 'cold']),
  rank: z.number().int().nonnegative(),
  node: z.object({ hostname: z.string(), nodeRank: z.number().int().nonnegative() }).nullable(),
  /** Its index among its node's ranks (LOCAL_RANK where the launcher places ranks in order). */
  localRank: z.number().int().nonnegative(),
  /** prep: it waits already in the cached mode (its loader's CPU); fetch: only in the cold mode (its storage). */
  cause: z.enum(['prep', 'fetch']),
  /** Its wait, the least-waiting rank's, and the difference, ms per iteration. */
  waitMs: EstimateSchema,
  leastWaitMs: EstimateSchema,
  extraWaitMs: EstimateSchema,
  leastWaitingRank: z.number().int().nonnegative(),
  text: z.string(),
});

/**
 * The checkpoint stall (analysis/checkpoint-stall.ts): the time the training
 * loop was blocked by saves, amortised over the iterations between them.
 */
export const CheckpointStallSchema = z.object({
  /** Per iteration, amortised: the mean save's blocking time over the save interval, ms. */
  ms: EstimateSchema,
  /** ms as a share of the real per-iteration time (analysis.iterMs). */
  fraction: nonneg().nullable(),
  /** Whether it clears the naming margin (as the prep and fetch stalls). */
  call: StallCallSchema,
  /** The mode whose save interval it uses: the cold mode where it ran, else the cached, else the synthetic. */
  mode: ModeSchema,
  /**
   * The modes whose saves give one save's cost: those that saved to the script's own targets (cached, cold); the
   * synthetic mode's scratch saves only where nothing else saved.
   */
  modes: z.array(ModeSchema),
  /** Saves behind the cost per save, over those modes' saving rank (the rank whose saves blocked longest). */
  saves: z.number().int().nonnegative(),
  /** Of them, saves inside a training step (their time is inside that iteration's step). */
  inStepSaves: z.number().int().nonnegative(),
  /** Blocking time of one save, ms (mean, 95% interval over the saves). */
  perSaveMs: EstimateSchema,
  /** Of it, time spent forcing data to storage (fsync), ms per save. */
  syncMsPerSave: nonneg(),
  /** Async saves: the mean background write, ms; null without async saves. */
  asyncWriteMs: nonneg().nullable(),
  /** Bytes one save wrote (mean); null when unknown. */
  bytesPerSave: nonneg().nullable(),
  /** Iterations between saves; null when it could not be told (one save and no epoch length). */
  intervalIterations: nonneg().nullable(),
  /**
   * Where the interval came from: consecutive saves, the epoch's length (one save an epoch), or the whole run (one
   * save).
   */
  intervalSource: z.enum(['saves', 'epoch', 'run']).nullable(),
  /** Bytes written over the blocking time: the rate the loop saw, bytes/s; null when bytes are unknown. */
  writeBytesPerSec: nonneg().nullable(),
  /** Bytes over the fsync time of saves that synced: the storage's write rate, bytes/s; null when no save synced. */
  syncedBytesPerSec: nonneg().nullable(),
  /** The APIs that saved, e.g. ['torch.save']. */
  apis: z.array(z.string()),
  /**
   * Synthetic mode: saves written to a scratch file and removed (the user's files untouched), and saves that could not
   * be diverted (an open file).
   */
  syntheticSaves: z
    .object({ scratch: z.number().int().nonnegative(), persisted: z.number().int().nonnegative() })
    .nullable(),
  /** Bytes the job tree wrote in that mode beyond the saves the hook saw, per iteration; null when not measured. */
  unseenWriteBytesPerIter: nonneg().nullable(),
  /** One line on how it was measured and what it rests on. */
  text: z.string(),
});
export type CheckpointStall = z.infer<typeof CheckpointStallSchema>;

/**
 * The epoch-boundary stall (analysis/boundary-stall.ts): per epoch, the time
 * in iter(loader) (worker start-up) and the first batch's wait beyond a
 * steady iteration's, amortised over the epoch.
 */
export const BoundaryStallSchema = z.object({
  /** Per iteration, amortised over the epoch's iterations, ms. */
  ms: EstimateSchema,
  /** ms as a share of the real per-iteration time (analysis.iterMs). */
  fraction: nonneg().nullable(),
  /** Whether it clears the naming margin. */
  call: StallCallSchema,
  /** The mode it was measured in: the cold mode where it ran, else the cached. */
  mode: ModeSchema,
  /** Per epoch: createMs plus the first wait beyond a steady one, ms (mean, 95% interval over the epochs). */
  perEpochMs: EstimateSchema,
  /** Of it, the mean time in iter(loader), ms. */
  createMs: nonneg(),
  /** Of it, the first wait beyond a steady iteration's wait, ms. */
  firstWaitExcessMs: nonneg(),
  /** A steady iteration's wait in that mode (epoch starts left out), ms. */
  steadyWaitMs: nonneg(),
  /**
   * 'later-epochs': measured at the starts of epochs after the first; 'first-epoch': no later epoch ran, estimated from
   * the first epoch's start (an upper bound: it holds one-time costs).
   */
  basis: z.enum(['later-epochs', 'first-epoch']),
  /** Epoch starts it rests on. */
  epochs: z.number().int().nonnegative(),
  /** Iterations in an epoch; null when the loader has no length. */
  epochIterations: z.number().int().positive().nullable(),
  /** Loader workers and persistent_workers, as the job ran them; null when not reported. */
  workers: z.number().int().nonnegative().nullable(),
  persistentWorkers: z.boolean().nullable(),
  /**
   * Whether it comes back every epoch: each later epoch measured paid at least half the mean; null with fewer than two
   * later epochs.
   */
  repeats: z.boolean().nullable(),
  /** The first epoch: from iter(loader) to its first batch, ms (the time to the first batch). */
  firstBatchMs: nonneg().nullable(),
  /**
   * Between epochs, outside the training loop: from an epoch's last batch to iter(loader) for the next (validation,
   * saves, the script's own work), mean ms; null when not reported. Not a data stall, and not in ms.
   */
  gapMs: nonneg().nullable().optional(),
  /** One line on how it was measured. */
  text: z.string(),
});
export type BoundaryStall = z.infer<typeof BoundaryStallSchema>;

/** One stage of prep, per sample (analysis/prep-stages.ts). */
export const PrepStageSchema = z.object({
  /** read, decode, transform, collate (as the job named it). */
  kind: z.string(),
  /** The stage's name: a transform's class, 'decode', 'read+decode', ... */
  name: z.string(),
  /** Its wall time per sample in the loader's processes, ms. */
  msPerSample: nonneg(),
  /**
   * Its CPU time per sample, estimated: msPerSample x fetchCpuShare (its clock is the wall's; a CPU clock per stage
   * costs microseconds), ms.
   */
  cpuMsPerSample: nonneg(),
  /** Its share of the loader processes' time per sample (fetchMsPerSample). */
  share: nonneg(),
});

/**
 * Prep taken apart by stage, from the cached mode's loader processes: each
 * stage's time per sample, checked against the prep CPU per sample the
 * differential method measured (analysis/prep-stages.ts).
 */
export const PrepStagesSchema = z.object({
  /** The mode whose loader processes reported the stages ('cached': the mode prep CPU is measured from). */
  mode: ModeSchema,
  /** Samples behind the figures. */
  samples: z.number().int().nonnegative(),
  /** The stages, costliest first. */
  stages: z.array(PrepStageSchema),
  /** The stages' sum per sample, wall time, ms. */
  stagesMsPerSample: nonneg(),
  /** The stages' sum per sample, CPU time as estimated (stagesMsPerSample x fetchCpuShare), ms. */
  stagesCpuMsPerSample: nonneg(),
  /** The loader processes' whole fetch (items and collation) per sample, wall time, ms. */
  fetchMsPerSample: nonneg(),
  /** The fetching threads' CPU time per sample, measured (their CPU clock, read at each fetch's ends), ms. */
  fetchCpuMsPerSample: nonneg(),
  /** Of the fetch, time in no stage the hook names (the dataset's own code), wall time, ms per sample. */
  unnamedMsPerSample: nonneg(),
  /** fetchCpuMsPerSample / fetchMsPerSample (at most 1): below 1 where the loader's processes waited for a core. */
  fetchCpuShare: nonneg(),
  /**
   * The prep CPU per sample the differential method measured (analysis.prepCpuSecPerSample), ms; null when not
   * measured.
   */
  measuredPrepCpuMsPerSample: nonneg().nullable(),
  /** stagesCpuMsPerSample / measuredPrepCpuMsPerSample; null without the measurement. */
  coverage: nonneg().nullable(),
  /** Whether the stages' sum is within COVERAGE_TOLERANCE of the measured prep CPU; null without the measurement. */
  withinTolerance: z.boolean().nullable(),
  /** The tolerance of that check, as a fraction of the measured prep CPU. */
  tolerance: nonneg(),
  /** What the tool can say of the host-to-device copy, which it does not time by stage. */
  copy: z.string(),
});
export type PrepStages = z.infer<typeof PrepStagesSchema>;
export type PrepStage = z.infer<typeof PrepStageSchema>;

export const AnalysisSchema = z.object({
  /** Pure compute per iteration (synthetic mode), ms. */
  computeMs: EstimateSchema.nullable(),
  /** T_cached - T_synthetic, ms, clamped at 0. */
  prepStallMs: EstimateSchema.nullable(),
  /** T_cold - T_cached, ms, clamped at 0. */
  fetchStallMs: EstimateSchema.nullable(),
  /** Per-iteration time of the cold mode (the real training pace), ms. */
  iterMs: EstimateSchema.nullable(),
  /** prep stall as a fraction of the cold iteration time. */
  prepStallFraction: nonneg().nullable(),
  /** fetch stall as a fraction of the cold iteration time. */
  fetchStallFraction: nonneg().nullable(),
  /** Ingestion rate of the accelerator (samples / T_synthetic). */
  gpuSamplesPerSec: nonneg().nullable(),
  /** Prep rate at this CPU count (samples / T_cached). */
  prepSamplesPerSec: nonneg().nullable(),
  /** Rate with cold storage (samples / T_cold). */
  coldSamplesPerSec: nonneg().nullable(),
  /** Storage read bandwidth measured in the cold mode, bytes/s. */
  storageReadBytesPerSec: nonneg().nullable(),
  /** Rate at which the cached mode consumed sample bytes from memory, bytes/s. */
  memoryReadBytesPerSec: nonneg().nullable(),
  /** CPU seconds of pre-processing per sample (cached minus synthetic CPU, per sample). */
  prepCpuSecPerSample: nonneg().nullable(),
  /**
   * Whether each stall is named: 'stall' when its 95% interval clears zero by
   * the margin of docs/method.md, 'within-noise' when it does not, 'unknown'
   * without the modes it needs. Absent in older profiles.
   */
  stallCalls: z.object({ prep: StallCallSchema, fetch: StallCallSchema }).optional(),
  /**
   * Each stall taken apart: how much the wait for data grew and how much the
   * training step itself grew between the two modes (CPU contention with the
   * loader slows a CPU-run step). The stall counts both. Absent without the modes.
   */
  prepStallParts: z.object({ waitGrowthMs: EstimateSchema, stepGrowthMs: EstimateSchema }).nullable().optional(),
  fetchStallParts: z.object({ waitGrowthMs: EstimateSchema, stepGrowthMs: EstimateSchema }).nullable().optional(),
  /** How the machine's pace moved between the runs of the schedule; null for a single pass. */
  drift: z
    .object({
      /** Each mode's first and second run, mean per-iteration time, ms. */
      modes: z.array(z.object({ mode: ModeSchema, firstMs: nonneg(), secondMs: nonneg() })),
      /** Steady drift fitted over all runs, % per minute (positive: slowing down); null when it cannot be fitted. */
      slopePctPerMin: finite().nullable(),
      /** Spread of run means around the drift line beyond their in-run noise, % of the mode's time (1 SD). */
      runToRunPct: nonneg().nullable(),
      /** Degrees of freedom behind runToRunPct. */
      df: z.number().int().nonnegative().nullable(),
    })
    .nullable()
    .optional(),
  /**
   * Checkpoint writes, per iteration amortised over the saves' interval; null when the job saved nothing the profiler
   * saw; absent in older profiles.
   */
  checkpointStall: CheckpointStallSchema.nullable().optional(),
  /**
   * The training loader's epoch boundaries, per iteration amortised over the epoch; null when no epoch start was
   * reported; absent in older profiles.
   */
  boundaryStall: BoundaryStallSchema.nullable().optional(),
  /** Bottleneck verdict. */
  verdict: z.object({
    bound: z.enum(['compute', 'prep', 'fetch', 'checkpoint', 'boundary', 'unknown']),
    severity: z.enum(['moderately', 'highly']).nullable(),
    text: z.string(),
  }),
  /** One line of advice. */
  advice: z.string(),
  /** Reasons some figures are not trustworthy (unproven states, missing modes). */
  caveats: z.array(z.string()),
  /**
   * Multi-rank jobs: the rank the others wait for, when one waits for its data beyond the others' noise; null when none
   * does; absent in older profiles.
   */
  straggler: StragglerSchema.nullable().optional(),
  /**
   * Prep taken apart by stage (the zero-code hook's loader processes); null when no stage was reported; absent in older
   * profiles.
   */
  prepStages: PrepStagesSchema.nullable().optional(),
});
export type Analysis = z.infer<typeof AnalysisSchema>;

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
 * The epochs after the first (docs/method.md, "The first epoch and the rest"):
 * the split and the verdict are of the cold pace, which only the first epoch
 * keeps where the page cache holds the dataset after it.
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

/**
 * The data a profile ran on, as one value tagged by the source that served it
 * (src/profile/data-sources/): what validate needs to open it again, and
 * never a credential. Older profiles lack it: sourceOfProfile
 * (schema/profile-source.ts) derives it from options and dataset.
 */
export const DataSourceRecordSchema = z.discriminatedUnion('kind', [
  z.object({
    /** Files on this machine's disks, read through its page cache. */
    kind: z.literal('files'),
    /** The --data folders (or files), absolute. */
    roots: z.array(z.string()),
    /** Whether the global drop_caches made the cold mode cold. */
    dropCaches: z.boolean(),
  }),
  z.object({
    /** Files on a FUSE mount, read by its daemon. */
    kind: z.literal('fuse'),
    roots: z.array(z.string()),
    dropCaches: z.boolean(),
    /** The mount and its metered daemon; null when the daemon could not be metered (the proofs then say why). */
    mount: FuseMountSchema.nullable(),
  }),
  z.object({
    /** Files on NFS: uncached bytes come over the network from its server, whose own cache is not controlled. */
    kind: z.literal('nfs'),
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
    /**
     * Remote data as named on the command line (--remote, --endpoint), without credentials or query; absent for local
     * files.
     */
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
     * A profile over several nodes, one CLI on each, kept in step by a
     * coordinator that one of them hosts; absent for one node.
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
         * Bytes/s this node read from another node's CLI as they met (a
         * 32 MiB bulk, a small one's time taken off; the coordinator's: the
         * slowest from any node); null: not measured; absent before it was.
         */
        peerBytesPerSec: z.number().nonnegative().nullable().optional(),
      })
      .optional(),
  }),
  /**
   * The data, as one value tagged by its source; absent in older profiles (read them through sourceOfProfile,
   * which derives it from options.data, options.remote, options.dropCaches, dataset.remote and dataset.mount,
   * still written for the readers of those).
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
    /**
     * Where memoryBudgetBytes came from: MemAvailable, or the memory cgroup that limits it (absent in older profiles).
     */
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
        /**
         * The profiler's cache that answered the cached mode (a folder under the profile's artefacts), emptied at the
         * end.
         */
        cacheDir: z.string().nullable(),
        /**
         * Samples in one object where objects are tar shards (counted in the first shard, as WebDataset groups members
         * by key); null: one object, one sample.
         */
        samplesPerObject: z.number().positive().nullable().optional(),
        /**
         * The job's own cache folder (--job-cache), emptied and kept empty in the cold mode; null or absent: none
         * named.
         */
        jobCacheDir: z.string().nullable().optional(),
      })
      .optional(),
    /**
     * Data on a FUSE mount whose daemon was metered (its sockets' received bytes, counted in the kernel); absent
     * otherwise.
     */
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
   * The cached mode again at other loader worker counts (profile --workers),
   * each pooled over its runs in the drift-cancelling schedule; workersAsked
   * says which count. Only counts the job was seen to apply are kept.
   */
  workersSweep: z.array(ModeResultSchema).optional(),
  /**
   * The cold mode again with a fixed share of the dataset held in the page
   * cache (profile --overlap), to measure how reads and pre-processing overlap.
   */
  overlapProbe: ModeResultSchema.extend({
    /** Share of the dataset's bytes held resident, 0..1. */
    residentShare: z.number().min(0).max(1),
  }).optional(),
  /**
   * The dataset's storage measured directly after the modes (no --storage-bw
   * throttle): a short, bounded read of evicted dataset files at the job's
   * read concurrency. Its bandwidth is the storage's own, where the cold mode
   * only shows what the job asked for when storage never set its pace.
   * Absent when a throttle was set (its rate is the bandwidth), without a cold
   * mode, and in older profiles.
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
   * The writer's seal, always the last field: 'sha256:' and the hex SHA-256
   * of the file's text without this field, keyed by the tool's version and
   * the compiled source of this schema (src/store/profile-seal.ts). A file
   * whose seal matches was validated by this very build when written, so a
   * reader skips validating it again; any other file is validated in full.
   * Readers drop it: a profile in memory carries no seal.
   */
  integrity: z.string().optional(),
});
export type Profile = z.infer<typeof ProfileSchema>;
