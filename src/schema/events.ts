import { z } from 'zod';
import { MODES } from './modes.js';

/**
 * Job-side event protocol, version 1 (docs/protocol.md). Each process of the job appends JSON lines to its own file in
 * $DSA_EVENTS_DIR.
 */
export const PROTOCOL_VERSION = 1;

/** Environment variables the CLI sets for the job. */
export const ENV = {
  /** 'synthetic' | 'cached' | 'cold'. Unset: the job runs unprofiled. */
  mode: 'DSA_MODE',
  /** Folder where each process writes events-<rank>-<pid>.jsonl (and each loader process its stages-<pid>.jsonl). */
  eventsDir: 'DSA_EVENTS_DIR',
  /** Maximum number of training iterations; the job ends cleanly after it. */
  iterations: 'DSA_ITERATIONS',
  /** A file whose existence asks the job to stop cleanly (enough data). */
  stopFile: 'DSA_STOP_FILE',
  /** '1': synchronise the accelerator at iteration boundaries. */
  sync: 'DSA_SYNC',
  /** Protocol version the CLI reads. */
  protocol: 'DSA_PROTOCOL',
  /**
   * Cached mode on a resident subset: a file listing the resident sample files, one absolute path a line. A job that
   * honours it samples only those files and says so in its start event (subsetFiles).
   */
  subsetFile: 'DSA_SUBSET_FILE',
  /**
   * The training loader's num_workers for this run (profile --workers, validate --workers). A job that honours it says
   * so in its start event (loader.scriptWorkers beside loader.workers).
   */
  numWorkers: 'DSA_NUM_WORKERS',
  /**
   * One launch, several modes: a file the CLI rewrites to switch the job's mode at an iteration boundary, one line
   * `<block> <mode>` (block 0 is DSA_MODE, before the file exists). A job that honours it says so in its start event
   * (switchModes) and writes a block event at each switch.
   */
  controlFile: 'DSA_CONTROL_FILE',
  /**
   * One launch on several nodes: how many nodes' profilers run the job, each writing its own ranks' control file once
   * its state is set. The ranks switch once every node's file names the block (docs/multi-node.md).
   */
  nodes: 'DSA_NODES',
  /** '1' in every process of a profiled job: the script may skip its own side effects (docs/side-effects.md). */
  profiling: 'DSA_PROFILING',
  /** '1' (profile --keep-outputs): the job's checkpoints are saved for real and its trackers log as they would. */
  keepOutputs: 'DSA_KEEP_OUTPUTS',
  /** Where the job's trackers log instead of their own places (TensorBoard's SummaryWriter under the hook). */
  scratchDir: 'DSA_SCRATCH_DIR',
  /**
   * '1' (profile --continue): the job is the real training run; each synthetic block is undone at its end, and the
   * control file's `<block> train` ends the blocks: the job trains on unprofiled (docs/protocol.md, "Continue").
   */
  continueRun: 'DSA_CONTINUE',
} as const;

/**
 * The launcher variables that carry a node's rank among the job's nodes, in the order they are read: torchrun's
 * GROUP_RANK (its agent's node rank, the one its global RANKs are numbered from), NODE_RANK (newer torchrun and
 * Lightning), Slurm's SLURM_NODEID. None set: node 0.
 */
export const NODE_RANK_ENV = ['GROUP_RANK', 'NODE_RANK', 'SLURM_NODEID'] as const;

/** Longest host name a start event may carry (a fully qualified name, RFC 1035); writers cut longer ones. */
export const MAX_HOSTNAME_CHARS = 255;

/** Longest plausible wait or compute of one iteration; beyond it a line is counted as bad. */
export const MAX_ITERATION_MS = 86_400_000;

export const ModeSchema = z.enum(MODES);
export type Mode = z.infer<typeof ModeSchema>;
export { MODES };

const common = {
  /** Protocol version. */
  v: z.literal(PROTOCOL_VERSION),
  /** Wall-clock time of the event, ms since the Unix epoch (fractional). */
  t: z.number().finite().nonnegative(),
  /** Rank of the process in a data-parallel job (0 when single-process). */
  rank: z.number().int().nonnegative().default(0),
};

/** The training loader's settings, as the job ran them. */
export const LoaderSettingsSchema = z.object({
  /** num_workers the loader ran with. */
  workers: z.number().int().nonnegative().optional(),
  /** num_workers the script itself set, when DSA_NUM_WORKERS overrode it. */
  scriptWorkers: z.number().int().nonnegative().optional(),
  /** Batches each worker prepares ahead (DataLoader prefetch_factor; absent without workers). */
  prefetchFactor: z.number().int().nonnegative().optional(),
  /** Whether the workers outlive an epoch (DataLoader persistent_workers). */
  persistentWorkers: z.boolean().optional(),
  /** Whether batches are copied to pinned memory (DataLoader pin_memory). */
  pinMemory: z.boolean().optional(),
  /** The framework whose trainer built the loader, when the hook recognised one ('hf-trainer', 'lightning'). */
  framework: z.string().max(100).optional(),
});
export type LoaderSettings = z.infer<typeof LoaderSettingsSchema>;

export const StartEventSchema = z.object({
  ...common,
  type: z.literal('start'),
  /** Process id of the writer. */
  pid: z.number().int().positive(),
  /** Number of ranks in the job. */
  worldSize: z.number().int().positive().default(1),
  /** Mode the job believes it is in (echo of DSA_MODE). */
  mode: ModeSchema,
  /** Samples per batch as configured, when known. */
  batchSize: z.number().int().positive().optional(),
  /** Loader worker processes/threads, when known (sets the CI block length). */
  workers: z.number().int().nonnegative().optional(),
  /** Who wrote the events: 'emulator', 'pytorch', 'manual', ... */
  source: z.string().max(200).optional(),
  /** Samples the job kept after restricting itself to DSA_SUBSET_FILE (absent: it did not restrict itself). */
  subsetFiles: z.number().int().nonnegative().optional(),
  /** What the job found when asked to restrict itself (which dataset, or why it could not). */
  subsetNote: z.string().max(1000).optional(),
  /** The training loader's settings, when the job knows them. */
  loader: LoaderSettingsSchema.optional(),
  /** Host name of the machine the process runs on (absent in older events: the machine the CLI ran the job on). */
  hostname: z.string().max(MAX_HOSTNAME_CHARS).optional(),
  /** Rank of that machine among the job's nodes (launcher's NODE_RANK_ENV; 0 on one node and in older events). */
  nodeRank: z.number().int().nonnegative().default(0),
  /** True when the job switches modes at the CLI's request (DSA_CONTROL_FILE): one launch measures every mode. */
  switchModes: z.boolean().optional(),
});

export const IterEventSchema = z.object({
  ...common,
  type: z.literal('iter'),
  /** Iteration index within this process, from 0. */
  i: z.number().int().nonnegative(),
  /** Time the training loop waited for this batch (in next()), ms (at most a day: larger is a bug). */
  waitMs: z.number().finite().nonnegative().max(MAX_ITERATION_MS),
  /** Time from receiving this batch to asking for the next one (compute), ms (at most a day). */
  computeMs: z.number().finite().nonnegative().max(MAX_ITERATION_MS),
  /** Samples in the batch. */
  samples: z.number().int().nonnegative(),
  /** Bytes of sample files behind the batch, when the job knows them. */
  bytes: z.number().finite().nonnegative().optional(),
  /** CPU time of the process writing the events so far (its threads, not its loader workers), ms. */
  processCpuMs: z.number().finite().nonnegative().optional(),
});

export const EndEventSchema = z.object({
  ...common,
  type: z.literal('end'),
  /** Why the job stopped iterating. */
  reason: z.enum(['budget', 'stop-file', 'exhausted', 'error']),
  /** Iterations completed by this process. */
  iterations: z.number().int().nonnegative(),
});

/**
 * One checkpoint save, written once it is over: at the loop's next batch request, next save or end (an fsync of the
 * saved file in between is part of it); an async save when its background write finishes, or at exit when it never did.
 * Only the outermost save is an event: Lightning's and Hugging Face's saves call torch.save inside.
 */
export const CheckpointEventSchema = z.object({
  ...common,
  type: z.literal('checkpoint'),
  /** Iterations this process had recorded when the save began (the save ran in iteration i's step when inStep). */
  i: z.number().int().nonnegative(),
  /**
   * True when the save ran inside a training step (a batch out, the next not yet asked): its time is inside that
   * iteration's computeMs; false between epochs or after the loop.
   */
  inStep: z.boolean(),
  /** The API that saved: torch.save, dcp.save, dcp.async_save, lightning, hf-trainer, manual (others kept as given). */
  api: z.string().max(100),
  /** Time the training loop was blocked by the save, ms (an async save: until the call returned, its staging). */
  blockingMs: z.number().finite().nonnegative().max(MAX_ITERATION_MS),
  /**
   * Of blockingMs, time spent in fsync/fdatasync of the saved files (inside the save, or right after it in the same
   * step: note 'synced-after'), ms; 0 when the save never synced.
   */
  syncMs: z.number().finite().nonnegative().max(MAX_ITERATION_MS).default(0),
  /**
   * Async save: from the call to the end of its background write, ms; null when the job ended first; absent for a
   * blocking save.
   */
  writeMs: z.number().finite().nonnegative().max(MAX_ITERATION_MS).nullable().optional(),
  /**
   * Bytes the save wrote (its files' sizes after it); null when the hook could not tell (an open file object it did not
   * track).
   */
  bytes: z.number().finite().nonnegative().nullable(),
  /**
   * False when the save did not land where the script asked: a profiled run writes to a scratch file beside the target
   * and removes it (docs/side-effects.md, "Your outputs").
   */
  persisted: z.boolean(),
  /**
   * How a save that was not persisted was handled ('scratch'), or why a save that should have been diverted was written
   * to its target ('open-file': the script handed an open file).
   */
  note: z.string().max(500).optional(),
});

/**
 * The training loader's epoch started, written when the epoch's first batch arrives. The time to the first batch is
 * createMs + firstWaitMs.
 */
export const EpochEventSchema = z.object({
  ...common,
  type: z.literal('epoch'),
  /** The epoch among this process's training-loader epochs, from 0. */
  epoch: z.number().int().nonnegative(),
  /** Index of the epoch's first iteration (whose waitMs is firstWaitMs). */
  i: z.number().int().nonnegative(),
  /**
   * Time in iter(loader): worker start-up when workers are not persistent, the persistent workers' reset, the sampler's
   * start, ms.
   */
  createMs: z.number().finite().nonnegative().max(MAX_ITERATION_MS),
  /** The epoch's first wait for a batch, from the first request to the batch, ms (equal to its iteration's waitMs). */
  firstWaitMs: z.number().finite().nonnegative().max(MAX_ITERATION_MS),
  /**
   * From the end of the previous epoch's loop (its StopIteration) to iter(loader) for this one (validation, saves, the
   * script's own work), ms; absent for the first epoch.
   */
  gapMs: z.number().finite().nonnegative().max(MAX_ITERATION_MS).optional(),
  /** Batches in an epoch (len(loader)); null when the loader has no length. */
  epochIterations: z.number().int().positive().nullable().optional(),
  /** Loader workers, and whether they outlive the epoch (persistent_workers). */
  workers: z.number().int().nonnegative().optional(),
  persistentWorkers: z.boolean().optional(),
});

/**
 * The job switched mode at an iteration boundary (DSA_CONTROL_FILE): the iterations from `i` on run in `mode`, until
 * the next block event.
 */
export const BlockEventSchema = z.object({
  ...common,
  type: z.literal('block'),
  /** The block's number, as the control file gave it (block 0 is DSA_MODE and has no event). */
  block: z.number().int().positive(),
  /** The mode the block runs in. */
  mode: ModeSchema,
  /** Index of the block's first iteration. */
  i: z.number().int().nonnegative(),
  /**
   * Batches the loader had already handed to its workers at the switch: the first ones of the block were fetched and
   * prepared under the previous block's state. Null when the loader does not say.
   */
  inFlight: z.number().int().nonnegative().nullable(),
});

/**
 * profile --continue: the training state a synthetic block changes, taken at its start ('take') and put back at its end
 * ('restore'); 'refused' where it cannot be held (the block then trains on real batches: not a synthetic block).
 */
export const SnapshotEventSchema = z.object({
  ...common,
  type: z.literal('snapshot'),
  /** The synthetic block's number (0: the first block, DSA_MODE). */
  block: z.number().int().nonnegative(),
  action: z.enum(['take', 'restore', 'refused']),
  /** The iteration index at which it was taken or put back. */
  i: z.number().int().nonnegative(),
  /** How long taking or putting back the copy held the training loop, ms. */
  ms: z.number().finite().nonnegative().optional(),
  /** Bytes of the copy (host memory). */
  bytes: z.number().int().nonnegative().optional(),
  /** Why the state cannot be held ('refused'). */
  reason: z.string().max(1000).optional(),
});

/** One stage's cumulative totals in one loader process. */
export const StageTotalSchema = z.object({
  /** read, decode, transform or collate (python/ds_analyzer/_stages.py); other kinds are kept as given. */
  kind: z.string().max(100),
  /**
   * The stage: 'read', 'decode', 'read+decode' (an image that read its file while it decoded), a transform's class
   * name, 'collate'.
   */
  name: z.string().max(200),
  /** Its wall time so far, exclusive of the stages inside it, ms. */
  ms: z.number().finite().nonnegative(),
  /** Calls so far (per sample for read, decode and transforms; per batch for collate). */
  calls: z.number().int().nonnegative(),
});

/**
 * A loader process's prep taken apart, cumulative since it started: written by each process that builds the training
 * loader's batches (a DataLoader worker; the training process itself without workers) to its own file
 * stages-<pid>.jsonl, at most every 250 ms after a batch and at its exit. Not part of EventSchema: these files are read
 * apart from the events files.
 */
export const StagesEventSchema = z.object({
  ...common,
  type: z.literal('stages'),
  /** Process id of the writer (a loader worker's own). */
  pid: z.number().int().positive(),
  /** Samples in the batches it built so far. */
  samples: z.number().int().nonnegative(),
  /** Batches it built so far. */
  batches: z.number().int().nonnegative(),
  /** Wall time building them (the loader's fetch: items and collation), ms. */
  fetchMs: z.number().finite().nonnegative(),
  /** The building thread's CPU time over the same fetches, ms. */
  fetchCpuMs: z.number().finite().nonnegative(),
  /** Each stage seen so far. */
  stages: z.array(StageTotalSchema).max(1000),
});
export type StagesEvent = z.infer<typeof StagesEventSchema>;

export const EventSchema = z.discriminatedUnion('type', [
  BlockEventSchema,
  SnapshotEventSchema,
  StartEventSchema,
  IterEventSchema,
  EndEventSchema,
  CheckpointEventSchema,
  EpochEventSchema,
]);
export type StartEvent = z.infer<typeof StartEventSchema>;
export type IterEvent = z.infer<typeof IterEventSchema>;
export type EndEvent = z.infer<typeof EndEventSchema>;
export type CheckpointEvent = z.infer<typeof CheckpointEventSchema>;
export type EpochEvent = z.infer<typeof EpochEventSchema>;
export type BlockEvent = z.infer<typeof BlockEventSchema>;
export type SnapshotEvent = z.infer<typeof SnapshotEventSchema>;
export type JobEvent = z.infer<typeof EventSchema>;
