/**
 * The contract of `ds-analyzer validate --json` (docs/json-output.md). validateOutput() types the report
 * src/validate/run-validate.ts builds against this schema.
 */
import { z } from 'zod';
import { outputHeader } from './numbers.js';

/** Version of validate's JSON; bump when a field is removed or changes meaning (adding one does not). */
export const VALIDATE_OUTPUT_VERSION = 1;

const nonneg = () => z.number().nonnegative();

/** One point checked: a page-cache size, a CPU count, or the control (the profiled settings again). */
export const ValidationPointSchema = z.discriminatedUnion('kind', [
  z.object({
    /** A page-cache size. */
    kind: z.literal('cache'),
    /** The cache size asked for, bytes. */
    cacheBytes: nonneg(),
    /** True when it is whatif's recommended cache (--cache recommended). */
    recommended: z.boolean().optional(),
    /**
     * A cell of whatif --matrix (validate --cells): the CPU count it ran at too, with an affinity mask; absent: the
     * profiled CPUs.
     */
    cpus: z.number().int().positive().optional(),
  }),
  z.object({
    /** A CPU count (affinity). */
    kind: z.literal('cpus'),
    /** CPUs the job was restricted to. */
    cpus: z.number().int().positive(),
  }),
  z.object({
    /** A loader worker count per rank (DSA_NUM_WORKERS). */
    kind: z.literal('workers'),
    /** Loader workers per rank the job was asked to run. */
    workers: z.number().int().nonnegative(),
  }),
  z.object({
    /** The cold mode at a read bandwidth (storage throttle, or for remote data the cap at the metering proxy). */
    kind: z.literal('bandwidth'),
    /** The bandwidth the reads were held to, bytes/s. */
    bytesPerSec: nonneg(),
  }),
  z.object({
    /**
     * Remote data: the cold mode with every request to the origin delayed at the metering proxy, so its first byte
     * comes this long after it is sent.
     */
    kind: z.literal('latency'),
    /** The time to a first byte asked for, s: the profiled median plus the delay added. */
    latencySec: nonneg(),
  }),
  z.object({
    /**
     * The cached mode with the job's writes to every disk held to a rate (a write throttle): its checkpoint stall
     * against whatif --write-bw.
     */
    kind: z.literal('write'),
    /** The rate the writes were held to, bytes/s. */
    bytesPerSec: nonneg(),
  }),
  z.object({
    /** The profiled settings again: the job's own run-to-run variation. */
    kind: z.literal('control'),
  }),
]);

/** How a cache point's dataset residency went against its target over the measured window. */
export const ResidencyVerdictSchema = z.object({
  /** The cap asked for, bytes (at most the dataset). */
  targetBytes: nonneg(),
  /** Half-width of the band around the target, bytes. */
  toleranceBytes: nonneg(),
  /** Mean dataset bytes resident; null without readings. */
  meanBytes: nonneg().nullable(),
  /** Smallest reading, bytes; null without readings. */
  minBytes: nonneg().nullable(),
  /** Largest reading, bytes; null without readings. */
  maxBytes: nonneg().nullable(),
  /** Residency readings in the measured window. */
  readings: z.number().int().nonnegative(),
  /** Share of the readings inside the band, 0..1. */
  inBandShare: nonneg(),
  /** Whether the cap held: the mean inside the band and most readings too. */
  held: z.boolean(),
});

/** Whether a CPU point's affinity reached every thread of the job. */
export const AffinityVerdictSchema = z.object({
  /** CPUs asked for (ids). */
  cpus: z.array(z.number().int().nonnegative()),
  /** Threads checked, mid-run. */
  threads: z.number().int().nonnegative(),
  /** Threads that may run on CPUs outside the asked ones. */
  outside: z.number().int().nonnegative(),
  /** One such thread with its CPUs, in words; null when none. */
  example: z.string().nullable(),
  /** Whether it held: threads were seen and none may run elsewhere. */
  held: z.boolean(),
});

/** A write point's checkpoint stall and iteration time, predicted (whatif --write-bw) and measured. */
export const CheckpointCheckSchema = z.object({
  /** Disks whose writes were held, as 'name (major:minor)'. */
  devices: z.array(z.string()),
  /** The throttle's cgroup hierarchy: on v1 the kernel's background writeback is not held. */
  cgroup: z.enum(['v1', 'v2']),
  /** Whether the profiled saves synced (fsync) before returning. */
  synced: z.boolean(),
  /** Saves the point's run made. */
  saves: z.number().int().nonnegative(),
  /** Predicted blocking time of one save, ms. */
  predictedPerSaveMs: nonneg(),
  /** Mean blocking time of the run's saves, ms; null when it made none. */
  measuredPerSaveMs: nonneg().nullable(),
  /** Predicted checkpoint stall per iteration, ms. */
  predictedStallMsPerIter: nonneg(),
  /** The run's checkpoint stall per iteration from its own save events, ms; null when it made none. */
  measuredStallMsPerIter: nonneg().nullable(),
  /** Predicted iteration time, saves and epoch starts included, ms. */
  predictedIterMs: nonneg(),
  /** The run's mean iteration time, ms; null when it failed. */
  measuredIterMs: nonneg().nullable(),
  /** Whether the stall is within 15% of the measured one or 3% of the iteration; null without a measurement. */
  stallWithinTolerance: z.boolean().nullable(),
  /** What the throttle could not hold (buffered saves on cgroup v1), in words; null otherwise. */
  caveat: z.string().nullable(),
});

/** One point's prediction against its measurement. */
export const ValidationResultSchema = z.object({
  /** The point. */
  point: ValidationPointSchema,
  /**
   * 'measured': tested its setting; 'not-held': ran, but its setting did not hold (left out of the error); 'failed':
   * nothing measured.
   */
  status: z.enum(['measured', 'not-held', 'failed']),
  /** Cache points: how residency went against the target; else null. */
  residency: ResidencyVerdictSchema.nullable(),
  /** CPU points: whether the affinity reached the job; else null. */
  affinity: AffinityVerdictSchema.nullable(),
  /** Predicted throughput (steady state), samples/s; for a cache point, at the cache the job really had. */
  predictedSamplesPerSec: nonneg(),
  /** Cache points: mean dataset bytes resident over the measured window; else null. */
  residentBytes: nonneg().nullable(),
  /** Cache points: the model's steady hit ratio at residentBytes, 0..1; else null. */
  predictedHitRatio: nonneg().nullable(),
  /** Cache points: hit ratio inferred from the storage bytes the job read, 0..1; else null. */
  measuredHitRatio: nonneg().nullable(),
  /**
   * Cache points: the model's throughput at measuredHitRatio instead of its policy's, samples/s: the error splits at it
   * into the policy's and the rest of the model's; else null.
   */
  atMeasuredHitSamplesPerSec: nonneg().nullable(),
  /** Measured throughput over the steady window, samples/s; null when the run failed. */
  measuredSamplesPerSec: nonneg().nullable(),
  /** 95% half-width of measuredSamplesPerSec, samples/s; null without an interval. */
  measuredHalfWidth: nonneg().nullable(),
  /** (predicted - measured) / measured, a fraction; null when not measured. */
  relativeError: z.number().nullable(),
  /** Prediction of the model anchored to the control run, samples/s; null without a control. */
  anchoredSamplesPerSec: nonneg().nullable(),
  /** (anchored - measured) / measured, a fraction; null without both. */
  anchoredError: z.number().nullable(),
  /** What happened, in a few words. */
  note: z.string(),
  /** When the job did not end well: the last lines of its log; else null. */
  failureTail: z.string().nullable(),
  /**
   * Cold points (bandwidth, latency): seconds from the job's start to its first batch, predicted and measured; absent
   * elsewhere and in older outputs.
   */
  firstBatchSec: z.object({ predicted: nonneg(), measured: nonneg() }).optional(),
  /**
   * Write points: the checkpoint stall and iteration time, predicted and measured; absent elsewhere and in older
   * outputs.
   */
  checkpoint: CheckpointCheckSchema.optional(),
});

export const ValidateOutputSchema = z.object({
  ...outputHeader(VALIDATE_OUTPUT_VERSION, 'validate'),
  /** The profile validated (absolute path). */
  profile: z.string(),
  /** One result per point run, in run order (the control first). */
  results: z.array(ValidationResultSchema),
  /** True when Ctrl-C stopped the run: results holds the points completed before it. */
  interrupted: z.boolean(),
  /** Median |relativeError| over the points that tested their setting, control left out, a fraction; null when none. */
  medianAbsError: nonneg().nullable(),
  /** Points (control left out) whose setting did not hold. */
  notHeld: z.number().int().nonnegative(),
  /** |relativeError| of the control, a fraction: the job's own run-to-run variation; null without one. */
  controlAbsError: nonneg().nullable(),
  /** Median |anchoredError| over the points after the control, a fraction; null when none. */
  anchoredMedianAbsError: nonneg().nullable(),
  /** Caveats of the model (assumed linear scaling, unproven modes), one sentence each. */
  modelCaveats: z.array(z.string()),
  /** Whether the overlap of reads and pre-processing was measured (else assumed). */
  overlapMeasured: z.boolean(),
  /** Points asked for but not run here (cache points where the page cache cannot be capped). */
  notRun: z.array(ValidationPointSchema),
});
export type ValidateOutput = z.infer<typeof ValidateOutputSchema>;

/** What the validate command has to print: the output without its header. */
export type ValidateOutputBody = Omit<ValidateOutput, 'schemaVersion' | 'kind'>;

/** The printed object: the header first, then the report, typed by the schema. */
export function validateOutput(body: ValidateOutputBody): ValidateOutput {
  return { schemaVersion: VALIDATE_OUTPUT_VERSION, kind: 'validate', ...body };
}
