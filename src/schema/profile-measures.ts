// The profile's measurements: estimates, the iterations a job reported and their summary, resource samples and the
// proof of a cache state.
import { z } from 'zod';
import { finite, nonneg } from './numbers.js';

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
  /** Set on iterations detected as warm-up and discarded (profiles before it: the first summary.warmupIterations). */
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
   * Cold mode: file pages on the active list besides the dataset's when it started (the job's mapped libraries, other
   * programs' files): `bytes`, and the memory cgroup's or the machine's counter it came from (`source`). The what-if's
   * simulated kernel counts them in the active list. Absent in older profiles and where neither counter could be read.
   */
  otherActiveFile: z.object({ bytes: nonneg(), source: z.string() }).optional(),
  /** Times the cold keeper re-evicted dataset pages during the run (cold mode). */
  reEvictions: z.number().int().nonnegative().optional(),
  /** How the cold keeper kept the dataset cold in the run, and what it cost (cold mode; absent in older profiles). */
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
