// The profile's analysis: the split of the iteration time, its stalls (checkpoint, boundary, straggler) and prep's
// stages.
import { z } from 'zod';
import { ModeSchema } from './events.js';
import { finite, nonneg } from './numbers.js';
import { EstimateSchema } from './profile-measures.js';

/**
 * 'stall': the interval clears the naming margin and the wait for data grew; 'contention': it clears the margin, but
 * only the step grew (CPU shared with the loader); 'within-noise': it does not clear the margin; 'unknown': modes
 * missing.
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
 * The checkpoint stall (analysis/checkpoint-stall.ts): the time the training loop was blocked by saves, amortised over
 * the iterations between them.
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
  /** The interval's source: consecutive saves, the epoch's length (one save an epoch), or the whole run (one save). */
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
 * The epoch-boundary stall (analysis/boundary-stall.ts): per epoch, the time in iter(loader) (worker start-up) and the
 * first batch's wait beyond a steady iteration's, amortised over the epoch.
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
 * Prep taken apart by stage, from the cached mode's loader processes: each stage's time per sample, checked against the
 * prep CPU per sample the differential method measured (analysis/prep-stages.ts).
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
  /** Prep CPU per sample the differential method measured (analysis.prepCpuSecPerSample), ms; null: not measured. */
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
   * Whether each stall is named: 'stall' when its 95% interval clears zero by the margin of docs/method.md,
   * 'within-noise' when it does not, 'unknown' without the modes it needs. Absent in older profiles.
   */
  stallCalls: z.object({ prep: StallCallSchema, fetch: StallCallSchema }).optional(),
  /**
   * Each stall taken apart: how much the wait for data grew and how much the training step itself grew between the two
   * modes (CPU contention with the loader slows a CPU-run step). The stall counts both. Absent without the modes.
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
