/**
 * The contract of `ds-analyzer whatif --json` (docs/json-output.md). The producer (src/whatif/whatif.ts) builds a
 * WhatifResult; whatifOutput() types it against this schema, so a field the model changes or drops breaks the build
 * until the schema, its version and the docs follow.
 */
import { z } from 'zod';
import { outputHeader } from './numbers.js';
import { ModeSchema } from './events.js';
import { WHATIF_OUTPUT_VERSION } from './versions.js';

const nonneg = () => z.number().nonnegative();

const BottleneckSchema = z.enum(['compute', 'prep', 'fetch']);
const CachePolicySchema = z.enum(['page-cache', 'minio']);

/** One fitted model parameter, with the measurement it comes from. */
export const ModelParameterSchema = z.object({
  /** Symbol used in docs/whatif.md's formulas: T_gpu, u, B_storage. */
  symbol: z.string(),
  /** What it is, in words. */
  name: z.string(),
  /** The value, in `unit`. */
  value: z.number(),
  /** Unit of `value`: ms, bytes, bytes/s, CPU-ms, share, ... */
  unit: z.string(),
  /** The measurement: a profile field or a derivation from fields. */
  source: z.string(),
  /** True when every mode it rests on proved its cache state. */
  proven: z.boolean(),
  /** Assumption or limit worth saying (lower bound, assumed, fallback). */
  note: z.string().optional(),
});

/** How prep's effective parallelism grows with CPUs: assumed linear, or fitted from a CPU sweep. */
export const CpuScalingSchema = z.discriminatedUnion('kind', [
  z.object({
    /** eff(c) = perCpu * c: assumed, no CPU sweep was run. */
    kind: z.literal('linear'),
    /** Effective parallelism per CPU, measured at the profiled CPU count (or assumed 1). */
    perCpu: nonneg(),
  }),
  z.object({
    /** Fitted from a CPU sweep: piecewise linear through the points. */
    kind: z.literal('fitted'),
    /** (cpus, effective parallelism in CPUs) pairs, ascending in cpus. */
    points: z.array(z.object({ cpus: nonneg(), eff: nonneg() })),
    /** Where the points came from, e.g. 'profile --cpus 1,2,4'. */
    source: z.string(),
  }),
]);

/** The machine and job a prediction is for. */
export const ScenarioSchema = z.object({
  /** Cache available to the dataset, bytes. */
  cacheBytes: nonneg(),
  /** CPUs of the whole server (all ranks). */
  cpus: nonneg(),
  /**
   * Storage read bandwidth of the whole server, bytes/s; 0 where the profile did not measure it (no cold mode: see
   * `unanswered`).
   */
  storageBytesPerSec: nonneg(),
  /** Accelerators (data-parallel ranks) per server. */
  gpus: nonneg(),
  /** Accelerator speed-up: compute time is divided by it. */
  gpuSpeedup: nonneg(),
  /** Pre-processing speed-up: the prep CPU per sample is divided by it; absent: 1, as profiled. */
  prepSpeedup: z.number().positive().optional(),
  /** Which cache holds the dataset: the OS page cache (LRU) or one that never evicts (MinIO). */
  cachePolicy: CachePolicySchema,
  /** Epochs averaged over (the first cold), or null for the steady state (epoch 2 on). */
  epochs: z.number().int().positive().nullable(),
  /** Loader workers per rank (DataLoader num_workers); null: as profiled. */
  workers: z.number().int().nonnegative().nullable(),
  /** Remote data: requests in flight per loader worker; null or absent: as profiled. */
  inFlightPerWorker: z.number().int().positive().nullable().optional(),
  /** Remote data: seconds from a request to its first byte; null or absent: as profiled. */
  requestLatencySec: nonneg().nullable().optional(),
  /** Remote data: bytes of one object (a shard), one request each; null or absent: as profiled. */
  objectBytes: nonneg().nullable().optional(),
  /** Concurrent jobs on the server reading the same dataset, each with `gpus` ranks; null or absent: one. */
  jobs: z.number().int().positive().nullable().optional(),
  /** For several jobs: true when they share one fetch and prep of each sample (CoorDL); null or absent: independent. */
  coordinated: z.boolean().nullable().optional(),
  /** Servers of the job, each as the rest of the scenario describes; null or absent: one. */
  nodes: z.number().int().positive().nullable().optional(),
  /**
   * With several nodes: true when the dataset is spread over their caches (CoorDL's partitioned cache); null or absent:
   * each node caches alone.
   */
  partitioned: z.boolean().nullable().optional(),
  /** Bytes/s a node reads from a peer's cache; set with `partitioned`. */
  peerBytesPerSec: nonneg().nullable().optional(),
});

/** What the model predicts for a scenario. Times per iteration of one rank; rates for the whole server. */
export const PredictionSchema = z.object({
  /** The scenario predicted. */
  scenario: ScenarioSchema,
  /** Bytes-weighted cache hit ratio in the steady state (epoch 2 on), 0..1. */
  steadyHitRatio: nonneg(),
  /** Hit ratio the prediction used, 0..1: steady, or averaged over `epochs` with the first at 0. */
  hitRatio: nonneg(),
  /** Compute per iteration, ms. */
  computeMs: nonneg(),
  /** Prep stall per iteration, ms. */
  prepStallMs: nonneg(),
  /** Fetch stall per iteration, ms. */
  fetchStallMs: nonneg(),
  /** Time per iteration, ms. */
  iterMs: nonneg(),
  /** Training throughput, samples/s, all ranks together. */
  samplesPerSec: nonneg(),
  /** One epoch at the predicted rate (the basis's), s. */
  epochSec: nonneg(),
  /** The first (cold-cache) epoch, s. */
  firstEpochSec: nonneg(),
  /** Seconds from the job's start to its first batch, nothing cached; absent where the profile did not record it. */
  firstBatchSec: nonneg().optional(),
  /** An epoch in the steady state, s. */
  steadyEpochSec: nonneg(),
  /** Share of time the accelerator computes, 0..1. */
  acceleratorUtilization: nonneg(),
  /** The limiting stage. */
  bottleneck: BottleneckSchema,
  /** In words: 'steady state (epoch 2 on)' or 'mean over N epochs, the first cold'. */
  basis: z.string(),
  /**
   * How far the answer moves over what the model assumed where nothing measured it (a worker's share of a CPU, the
   * overlap of reads and prep, storage that never set the pace): the baseline's and the asked prediction's only. Absent
   * elsewhere.
   */
  range: z
    .object({
      /** Time per iteration at the fast and the slow end, ms. */
      iterMs: z.object({ low: nonneg(), high: nonneg() }),
      /** Throughput at the slow and the fast end, samples/s. */
      samplesPerSec: z.object({ low: nonneg(), high: nonneg() }),
      /** The assumptions that move this answer by more than 1%, in words; empty when it rests on measurements alone. */
      assumptions: z.array(z.string()),
    })
    .optional(),
});

/** One row of the cache sweep (0 to the dataset's size) at the asked scenario. */
export const CacheSweepRowSchema = z.object({
  /** Cache size, bytes. */
  cacheBytes: nonneg(),
  /** cacheBytes over the dataset's bytes, 0..1. */
  cacheFraction: nonneg(),
  /** Steady hit ratio of the page cache under the policy assumed (`pageCachePolicy`), 0..1. */
  pageCacheHitRatio: nonneg(),
  /** Steady hit ratio of exact LRU at the same size, 0..1: for comparison. */
  lruHitRatio: nonneg(),
  /** Steady hit ratio of a MinIO cache, min(1, cache / dataset). */
  minioHitRatio: nonneg(),
  /** Predicted throughput with the page cache, samples/s. */
  pageCacheSamplesPerSec: nonneg(),
  /** Predicted throughput with a MinIO cache, samples/s. */
  minioSamplesPerSec: nonneg(),
  /** Limiting stage with the page cache. */
  pageCacheBottleneck: BottleneckSchema,
  /** Limiting stage with a MinIO cache. */
  minioBottleneck: BottleneckSchema,
});

/** One row of the CPU sweep at the asked scenario. */
export const CpuSweepRowSchema = z.object({
  /** CPUs of the server. */
  cpus: nonneg(),
  /** Predicted prep stall per iteration, ms. */
  prepStallMs: nonneg(),
  /** Predicted time per iteration, ms. */
  iterMs: nonneg(),
  /** Predicted throughput, samples/s. */
  samplesPerSec: nonneg(),
  /** Share of time the accelerator computes, 0..1. */
  acceleratorUtilization: nonneg(),
  /** Limiting stage. */
  bottleneck: BottleneckSchema,
});

/** One row of the loader-workers sweep. */
export const WorkersSweepRowSchema = z.object({
  /** Loader workers per rank (DataLoader num_workers). */
  workers: nonneg(),
  /** Predicted prep stall per iteration, ms. */
  prepStallMs: nonneg(),
  /** Predicted time per iteration, ms. */
  iterMs: nonneg(),
  /** Predicted throughput, samples/s. */
  samplesPerSec: nonneg(),
  /** Limiting stage. */
  bottleneck: BottleneckSchema,
  /** CPUs the workers and the training processes need at this count. */
  cpusNeeded: nonneg(),
});

/** The smallest change of one setting that removes a stall (steady state). */
export const RecommendationSchema = z.object({
  /** What is changed: the cache, the CPUs or the storage bandwidth. */
  kind: z.enum(['cache', 'cpus', 'storage', 'workers', 'requests', 'objects']),
  /** For a cache: which policy. */
  cachePolicy: CachePolicySchema.optional(),
  /** The value that removes the stall, in `unit`; 0 when nothing is needed; null when no value does. */
  value: nonneg().nullable(),
  /** Unit of `value`. */
  unit: z.enum(['bytes', 'cpus', 'bytes/s', 'workers', 'requests']),
  /** The prediction with the change applied; null when no value removes the stall. */
  prediction: PredictionSchema.nullable(),
  /** Page cache only: the size below which the stall returns, bytes; `value` leaves slack above it. */
  edgeBytes: nonneg().optional(),
  /**
   * A cache when the overlap of reads and prep was not measured: the size needed if they run in series, bytes (null:
   * none).
   */
  ifSerialBytes: nonneg().nullable().optional(),
  /** The sentence shown in the terminal. */
  text: z.string(),
});

/** The costliest stage of prep and what to do about it (whatif/prep-stage-advice.ts). */
export const PrepStageAdviceSchema = z.object({
  /** The stage's kind: read, decode, transform, collate. */
  kind: z.string(),
  /** The stage's name (a transform's class, 'decode', ...). */
  name: z.string(),
  /** Its share of the loader processes' time per sample. */
  share: nonneg(),
  /** Its CPU time per sample, as estimated (analysis.prepStages), ms. */
  cpuMsPerSample: nonneg(),
  /** The advice: a line of at most 120 characters, then its details. */
  lines: z.array(z.string()),
});
export type PrepStageAdvice = z.infer<typeof PrepStageAdviceSchema>;

/** A per-iteration time with and without the checkpoint and boundary stalls. */
const WithStallsSchema = z.object({
  /** The steady model's per-iteration time plus the checkpoint and boundary stalls, ms. */
  iterMs: nonneg(),
  /** Samples per second, all ranks together, at that time. */
  samplesPerSec: nonneg(),
});

/**
 * The checkpoint and epoch-boundary what-if (whatif/pipeline-stalls.ts): the stalls as profiled and as asked, added to
 * the steady model's prediction.
 */
export const PipelineWhatifSchema = z.object({
  /** The checkpoint stall; null when the profile saw no save. */
  checkpoint: z
    .object({
      /** Save mode, interval, one save's blocking time and the stall per iteration: as profiled, and as asked. */
      profiled: z.object({
        saveMode: z.enum(['sync', 'async']),
        everyIterations: nonneg(),
        perSaveMs: nonneg(),
        stallMsPerIter: nonneg(),
        synced: z.boolean(),
      }),
      asked: z.object({
        saveMode: z.enum(['sync', 'async']),
        everyIterations: nonneg(),
        perSaveMs: nonneg(),
        stallMsPerIter: nonneg(),
        /** stallMsPerIter over the whole iteration with it. */
        overhead: nonneg(),
        /** The write bandwidth asked (--write-bw), bytes/s; null: as profiled. */
        writeBytesPerSec: nonneg().nullable(),
      }),
      /**
       * The overhead budget (CheckFreq: 3.5%) and the fewest iterations between saves that keep under it at the asked
       * bandwidth and save mode.
       */
      budget: nonneg(),
      everyForBudget: nonneg().nullable(),
      /** Work lost by a failure at the asked interval, on average half an interval, s. */
      lostWorkPerFailureSec: nonneg(),
      /**
       * With --failures-per-day: the share of time lost to failures and to saving at the asked interval, and the
       * interval that makes their sum least (Young's rule, sqrt(2 x save time x MTBF)).
       */
      failures: z
        .object({ perDay: nonneg(), lostShare: nonneg(), totalShare: nonneg(), bestEveryIterations: nonneg() })
        .nullable(),
      /** What the answer rests on that was not measured, one sentence each. */
      assumptions: z.array(z.string()),
    })
    .nullable(),
  /** The epoch-boundary stall; null when the profile saw no epoch start. */
  boundary: z
    .object({
      profiled: z.object({
        perEpochMs: nonneg(),
        stallMsPerIter: nonneg(),
        persistentWorkers: z.boolean().nullable(),
        prefetchFactor: z.number().int().nonnegative().nullable(),
      }),
      asked: z.object({
        perEpochMs: nonneg(),
        stallMsPerIter: nonneg(),
        persistentWorkers: z.boolean().nullable(),
        prefetchFactor: z.number().int().nonnegative().nullable(),
      }),
      /** The line to paste into the script for the asked loader settings; null when nothing changes. */
      line: z.string().nullable(),
      assumptions: z.array(z.string()),
    })
    .nullable(),
  /** The baseline and the asked prediction with the stalls added. */
  baseline: WithStallsSchema,
  prediction: WithStallsSchema,
});
export type PipelineWhatif = z.infer<typeof PipelineWhatifSchema>;

export const WhatifOutputSchema = z.object({
  ...outputHeader(WHATIF_OUTPUT_VERSION, 'whatif'),
  /** Profile file read. */
  profilePath: z.string(),
  /** Job name of the profile. */
  jobName: z.string(),
  /** Model parameters with their sources. */
  parameters: z.array(ModelParameterSchema),
  /** CPU scaling the model used. */
  cpuScaling: CpuScalingSchema,
  /** The model at the profiled settings against each measured mode. */
  selfCheck: z.array(
    z.object({
      /** The profile's mode. */
      mode: ModeSchema,
      /** Its measured time per iteration, ms. */
      measuredIterMs: nonneg(),
      /** The model's time per iteration for it, ms. */
      predictedIterMs: nonneg(),
    }),
  ),
  /** Prediction at the profiled settings (cache: what the page cache could give the dataset when profiled). */
  baseline: PredictionSchema,
  /** Prediction for the asked scenario. */
  prediction: PredictionSchema,
  /** Scenario settings the user changed (flags given). */
  changed: z.array(ScenarioSchema.keyof()),
  /**
   * The policy the page cache's hit ratios assume: 'linux-two-list' (the kernel's active and inactive lists with
   * refault activation, simulated) or 'exact-lru' (a job's own object cache, validate's cap, or a kernel with the
   * multi-generational LRU on), and why, in words.
   */
  pageCachePolicy: z.object({ model: z.enum(['linux-two-list', 'exact-lru']), why: z.string() }),
  /** Cache sweep at the asked scenario. */
  cacheSweep: z.array(CacheSweepRowSchema),
  /** CPU sweep at the asked scenario. */
  cpuSweep: z.array(CpuSweepRowSchema),
  /** Rows over loader-worker counts at the asked scenario; empty when the job did not report its workers. */
  workersSweep: z.array(WorkersSweepRowSchema),
  /** Smallest changes that remove each stall, at the asked scenario. */
  recommendations: z.array(RecommendationSchema),
  /** Prep's costliest stage, where the profile has prep's stages and a prep stall at its settings; absent otherwise. */
  prepStage: PrepStageAdviceSchema.optional(),
  /** What the recommendations assumed where nothing measured it, each taken at its slow end, in words. */
  adviceAssumptions: z.array(z.string()),
  /** Assumptions and limits of the prediction, one sentence each. */
  caveats: z.array(z.string()),
  /**
   * What the profile could not answer, one line each naming the flags and the mode that measures them (a profile
   * without the cold mode: the cache and storage questions and recommendations); empty when everything was answered.
   */
  unanswered: z.array(z.string()),
  /**
   * The validate command that would run the asked setting, when the profile did not run it and validate can (one cache
   * size, CPU count or worker count); null otherwise.
   */
  validateCommand: z.string().nullable(),
  /**
   * What a cache of this data is: the OS page cache over files, or (remote data) a local folder of whole objects;
   * absent in older outputs: the page cache.
   */
  dataCache: z.enum(['page-cache', 'object-cache']).optional(),
  /**
   * Checkpoint and epoch-boundary stalls, as profiled and as asked (--checkpoint-every, --write-bw, --async-save,
   * --persistent-workers); absent when the profile saw neither.
   */
  pipeline: PipelineWhatifSchema.optional(),
  /**
   * whatif --jobs K: the K jobs each reading and pre-processing their own samples against the K sharing one fetch and
   * prep (CoorDL), at the asked scenario otherwise; absent without --jobs.
   */
  jobs: z
    .object({
      /** K, the concurrent jobs. */
      count: z.number().int().positive(),
      /** Every job fetching and preparing its own samples. */
      independent: PredictionSchema,
      /** The jobs sharing one fetch and one prep of each sample. */
      coordinated: PredictionSchema,
      /** coordinated over independent throughput. */
      speedup: nonneg(),
    })
    .optional(),
  /**
   * whatif --nodes N --cache-policy partitioned: the N nodes' caches as one partitioned cache against each node caching
   * alone in its page cache, at the asked scenario otherwise; absent otherwise.
   */
  nodes: z
    .object({
      /** N, the nodes. */
      count: z.number().int().positive(),
      /** Each node's page cache holding what it read itself. */
      independent: PredictionSchema,
      /** The dataset spread over the nodes' caches, a miss fetched from the peer that holds it. */
      partitioned: PredictionSchema,
      /** partitioned over independent throughput. */
      speedup: nonneg(),
    })
    .optional(),
});
export type WhatifOutput = z.infer<typeof WhatifOutputSchema>;

/** What the whatif core returns: the output without its header. */
export type WhatifOutputBody = Omit<WhatifOutput, 'schemaVersion' | 'kind'>;
