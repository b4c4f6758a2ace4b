/**
 * Words shown to users for the bottleneck verdict and its advice, keyed by bound and severity. Kept apart from the
 * arithmetic (STYLE.md, "Words") so they can be reviewed and changed in one place.
 */
import type { BoundaryStall, CheckpointStall } from '../schema/profile.js';
import { STALL_TEXT } from './stall-text.js';
import { formatRate } from '../units.js';

/** Bottleneck kinds of the verdict. */
export type Bound = 'compute' | 'prep' | 'fetch' | 'checkpoint' | 'boundary' | 'unknown';
/** Severity of a data-bound verdict. */
export type Severity = 'moderately' | 'highly';

/** Measured numbers the texts interpolate; null when not known. */
export interface TextContext {
  /** Fetch stall as a fraction of the iteration time (0 when not significant). */
  fetchFraction: number | null;
  /** Prep stall as a fraction of the iteration time (0 when not significant). */
  prepFraction: number | null;
  /** Prep plus fetch stall as a fraction of the iteration time, significant or not. */
  totalStallFraction: number | null;
  /** Storage read bandwidth measured in the cold mode, bytes/s. */
  storageReadBytesPerSec: number | null;
  /** Storage bandwidth the accelerators could consume: G x ranks x mean bytes per sample, bytes/s. */
  neededStorageBytesPerSec: number | null;
  /** Pre-processing CPU seconds per sample. */
  prepCpuSecPerSample: number | null;
  /** Accelerator ingestion rate G of all ranks together, samples/s. */
  gpuSamplesPerSec: number | null;
  /** Prep rate P at this CPU count, all ranks together, samples/s. */
  prepSamplesPerSec: number | null;
  /** Modes missing for a verdict. */
  missingModes: string[];
  /** Of them, the modes that ran but stalled (analysis/stalls.ts), and why; absent or empty: none. */
  stalled?: { mode: string; cause: 'no-bytes' | 'request-errors' | 'hung' | 'timeout' | 'ended'; text: string }[];
  /** True when the dominant stall rests on an unproven cache state. */
  unproven: boolean;
  /** True when neither stall clears the noise (docs/method.md, "When a stall is named"). */
  stallsWithinNoise: boolean;
  /** No stall named, yet the noise leaves room for one this large (a share of the iteration); null otherwise. */
  inconclusive: { roomFraction: number; runToRunPct: number | null } | null;
  /** A stall that is the step slowing beside the loader, not a longer wait for data; null when none is. */
  contention: { stall: 'prep' | 'fetch'; stepGrowthMs: number; fraction: number } | null;
  /** True when the stall the verdict names (prep or fetch) is that contention, not a longer wait. */
  boundIsContention?: boolean;
  /** A compute-bound verdict beside small named stalls: the room the noise leaves for one not named; null otherwise. */
  noiseRoom?: { roomFraction: number } | null;
  /** Loader workers (per rank, all ranks) fewer than the job's CPUs (cpus); null when not, or not reported. */
  workersLimit: { perRank: number; workers: number; cpus: number } | null;
  /** True for remote data: fetched bytes came over the network, not from storage (absent: local files). */
  remote?: boolean;
  /** The checkpoint stall, with CheckFreq's interval for its overhead budget (everyForBudget); null without saves. */
  checkpoint?: (Omit<CheckpointStall, 'text'> & { everyForBudget: number }) | null;
  /** The epoch-boundary stall; null when no epoch start was reported. */
  boundary?: Omit<BoundaryStall, 'text'> | null;
  /** The framework that built the training loader ('hf-trainer', 'lightning'), when the hook recognised one. */
  loaderFramework?: string | null;
}

/** Where fetched bytes come from, as the verdicts and advice name it. */
const source = (c: TextContext): string => (c.remote ? 'the network' : 'storage');

type Text = (c: TextContext) => string;
type Keyed = {
  compute: Text;
  prep: Record<Severity, Text>;
  fetch: Record<Severity, Text>;
  checkpoint: Record<Severity, Text>;
  boundary: Record<Severity, Text>;
  unknown: Text;
};

const pct = (f: number | null): string => (f === null ? '?%' : `${Math.round(f * 100)}%`);
const rate = (b: number | null): string => (b === null ? 'an unmeasured rate' : formatRate(b));
const perSec = (s: number | null): string => (s === null ? '?' : s >= 100 ? s.toFixed(0) : s.toPrecision(3));
const unprovenTag = (c: TextContext): string => (c.unproven ? ' (cache state unproven: see caveats)' : '');
const otherStall = (other: number | null, what: string): string =>
  other !== null && other > 0 ? `, ${pct(other)} on ${what}` : '';

/** The noise's room for a stall not named, beside a compute-bound verdict's small named stalls. */
const roomNote = (c: TextContext): string =>
  c.noiseRoom ? ` (the noise leaves room for one of up to ${pct(c.noiseRoom.roomFraction)})` : '';

/** A prep or fetch stall that is the step running slower beside the loader or the reads: named, as contention. */
function contentionVerdict(severity: Severity, stall: 'prep' | 'fetch', c: TextContext): string {
  const share = stall === 'prep' ? c.prepFraction : c.fetchFraction;
  return (
    `${severity} ${stall}-bound by CPU contention: ${pct(share)} of each iteration is the step running ` +
    `${c.contention?.stepGrowthMs.toFixed(1) ?? '?'} ms slower beside the ${CONTENTION_WITH[stall]}, not a longer ` +
    `wait for data${unprovenTag(c)}`
  );
}

/** What a step that slows in each stall's mode shares its cores with. */
const CONTENTION_WITH = { prep: 'loader', fetch: 'reads from storage' } as const;

/** One-line verdicts, e.g. 'highly fetch-bound: 62% of each iteration waits on storage'. */
export const VERDICT_TEXT: Keyed = {
  compute: (c) =>
    c.contention
      ? `compute-bound: the job does not wait longer for data, but its step ` +
        `ran ${c.contention.stepGrowthMs.toFixed(1)} ms ` +
        `(${pct(c.contention.fraction)}) slower beside the ${CONTENTION_WITH[c.contention.stall]} (CPU contention)`
      : c.stallsWithinNoise
        ? 'compute-bound: the data stalls are within noise of zero'
        : `compute-bound: data stalls take ${pct(c.totalStallFraction)} of each iteration${roomNote(c)}`,
  prep: {
    moderately: (c) =>
      c.boundIsContention
        ? contentionVerdict('moderately', 'prep', c)
        : `moderately prep-bound: ${pct(c.prepFraction)} of each iteration waits on CPU pre-processing` +
          `${otherStall(c.fetchFraction, source(c))}${unprovenTag(c)}`,
    highly: (c) =>
      c.boundIsContention
        ? contentionVerdict('highly', 'prep', c)
        : `highly prep-bound: ${pct(c.prepFraction)} of each iteration waits on CPU pre-processing` +
          `${otherStall(c.fetchFraction, source(c))}${unprovenTag(c)}`,
  },
  fetch: {
    moderately: (c) =>
      c.boundIsContention
        ? contentionVerdict('moderately', 'fetch', c)
        : `moderately fetch-bound: ${pct(c.fetchFraction)} of each iteration waits on ${source(c)}` +
          `${otherStall(c.prepFraction, 'CPU pre-processing')}${unprovenTag(c)}`,
    highly: (c) =>
      c.boundIsContention
        ? contentionVerdict('highly', 'fetch', c)
        : `highly fetch-bound: ${pct(c.fetchFraction)} of each iteration waits on ${source(c)}` +
          `${otherStall(c.prepFraction, 'CPU pre-processing')}${unprovenTag(c)}`,
  },
  checkpoint: {
    moderately: (c) =>
      `moderately checkpoint-bound: ${pct(c.checkpoint?.fraction ?? null)} of each iteration is spent saving ` +
      `checkpoints${unprovenTag(c)}`,
    highly: (c) =>
      `highly checkpoint-bound: ${pct(c.checkpoint?.fraction ?? null)} of each iteration is spent saving ` +
      `checkpoints${unprovenTag(c)}`,
  },
  boundary: {
    moderately: (c) =>
      `moderately boundary-bound: ${pct(c.boundary?.fraction ?? null)} of each iteration is lost at epoch ` +
      `starts${unprovenTag(c)}`,
    highly: (c) =>
      `highly boundary-bound: ${pct(c.boundary?.fraction ?? null)} of each iteration is lost at epoch ` +
      `starts${unprovenTag(c)}`,
  },
  unknown: (c) =>
    c.stalled?.[0]?.cause === 'ended'
      ? `inconclusive: ${c.stalled[0].text}; a verdict needs the synthetic, cached and cold modes measured`
      : c.stalled?.length
        ? `unknown: the ${c.stalled.map((s) => s.mode).join(' and ')} mode stalled (${c.stalled[0].text}); ` +
          'a verdict needs the synthetic, cached and cold modes measured'
        : c.missingModes.length > 0
          ? `unknown: a verdict needs the synthetic, cached and cold modes; missing: ${c.missingModes.join(', ')}`
          : c.inconclusive
            ? `inconclusive: no data stall stands out of the noise, but the noise leaves room for one of up ` +
              `to ${pct(c.inconclusive.roomFraction)} of each iteration` +
              (c.inconclusive.runToRunPct !== null
                ? ` (the machine's pace moved ${c.inconclusive.runToRunPct.toFixed(0)}% from run to run)`
                : '')
            : 'unknown: the measured iteration times are zero',
};

const cpusNeeded = (c: TextContext): string =>
  c.prepCpuSecPerSample !== null && c.gpuSamplesPerSec !== null
    ? ` Keeping up with the accelerator (${perSec(c.gpuSamplesPerSec)} samples/s) takes about ` +
      `${(c.prepCpuSecPerSample * c.gpuSamplesPerSec).toFixed(1)} CPU cores of pre-processing ` +
      `(${(c.prepCpuSecPerSample * 1000).toFixed(1)} CPU-ms per sample).`
    : '';

/** num_workers first, when the job's loader workers are fewer than its CPUs: the lever that costs nothing. */
const workersFirst = (c: TextContext): string =>
  c.workersLimit === null
    ? ''
    : 'Raise num_workers first: ' +
      (c.workersLimit.perRank === 0
        ? `the training process loads every batch itself (num_workers=0), in series with its step, on one of the ` +
          `job's ${c.workersLimit.cpus} CPUs; `
        : `${c.workersLimit.perRank} loader worker${c.workersLimit.perRank === 1 ? '' : 's'} per rank ` +
          `(${c.workersLimit.workers} in all) pre-process on at most ${c.workersLimit.workers} of the ` +
          `job's ${c.workersLimit.cpus} CPUs; `) +
      "'ds-analyzer whatif' says whether more of them remove the stall, and gives the count and the line to " +
      'paste (profile --workers measures the counts). ';

const storageNeeded = (c: TextContext): string =>
  c.neededStorageBytesPerSec !== null
    ? ` The accelerator could ` +
      `consume ${rate(c.neededStorageBytesPerSec)}; ${source(c)} delivered ${rate(c.storageReadBytesPerSec)}.`
    : ` ${c.remote ? 'The network' : 'Storage'} delivered ${rate(c.storageReadBytesPerSec)}.`;

/** Remote data: a local cache, more requests in flight, or a faster network; the what-if says which. */
const remoteFix =
  " Keep a local cache of the objects (the client's cache directory, or a copy on local disk), raise the " +
  'requests in flight per loader worker' +
  " where latency holds them back, or move the data closer: 'ds-analyzer whatif --cache', '--in-flight' and " +
  "'--storage-bw' say what each buys; more CPUs will not help.";

/** One piece of advice per verdict. */
export const ADVICE_TEXT: Keyed = {
  compute: (c) =>
    c.contention
      ? contentionAdvice(c.contention.stall)
      : 'The data pipeline keeps up with the accelerator: nothing to change in data loading.',
  prep: {
    moderately: (c) =>
      c.boundIsContention
        ? contentionAdvice('prep')
        : `${workersFirst(c)}Pre-processing (P = ${perSec(c.prepSamplesPerSec)} samples/s) falls behind the accelerator.` +
          `${cpusNeeded(c)} Add loader workers or CPUs, or make transforms cheaper.`,
    highly: (c) =>
      c.boundIsContention
        ? contentionAdvice('prep')
        : `${workersFirst(c)}Pre-processing (P = ${perSec(c.prepSamplesPerSec)} samples/s) is the ` +
          `bottleneck.${cpusNeeded(c)}` +
          ' Add loader workers or CPUs, make transforms cheaper (decode at lower resolution, cache decoded data),' +
          ' or decode on the GPU (NVIDIA DALI).',
  },
  fetch: {
    moderately: (c) =>
      c.boundIsContention
        ? contentionAdvice('fetch')
        : c.remote
          ? `Network fetches slow training.${storageNeeded(c)}${remoteFix}`
          : `Storage reads slow training.${storageNeeded(c)}` +
            ' More page cache (memory) for the dataset or a local cache copy would remove most of the stall.',
    highly: (c) =>
      c.boundIsContention
        ? contentionAdvice('fetch')
        : c.remote
          ? `The network is the bottleneck.${storageNeeded(c)}${remoteFix}`
          : `Storage is the bottleneck.${storageNeeded(c)}` +
            ' Give the page cache room for the dataset, copy it to faster local storage, or keep a local cache' +
            ' copy (e.g. a MinIO-style cache as in CoorDL); more CPUs will not help.',
  },
  checkpoint: {
    moderately: (c) => checkpointAdvice(c),
    highly: (c) => checkpointAdvice(c),
  },
  boundary: {
    moderately: (c) => boundaryAdvice(c),
    highly: (c) => boundaryAdvice(c),
  },
  unknown: (c) =>
    c.stalled?.length
      ? `The ${c.stalled[0].mode} block stalled: ${STALL_TEXT.fix[c.stalled[0].cause]}.`
      : c.missingModes.length > 0
        ? `Profile the missing modes (${c.missingModes.join(', ')}) to get a verdict.`
        : c.inconclusive
          ? 'Profile again when the machine is quieter, or with more iterations per mode (--min-iterations), to ' +
            'tell a compute-bound job from a data-bound one.'
          : 'Check that the job reports its iteration times (waitMs, computeMs).',
};

/** The step slower beside the loader or the reads: they share the CPU cores. */
function contentionAdvice(stall: 'prep' | 'fetch'): string {
  return (
    'Nothing in data loading makes the job wait. The step itself is slower while the ' +
    `${CONTENTION_WITH[stall]} works, because they share the CPU cores: on an accelerator this cost goes away; ` +
    'on CPU, fewer loader workers or cheaper transforms give the step its cores back.'
  );
}

/**
 * Save less often, or off the training loop's path: CheckFreq's interval for a 3.5% budget, an async save where the
 * save syncs or writes slowly.
 */
function checkpointAdvice(c: TextContext): string {
  const k = c.checkpoint;
  if (!k) return 'Save checkpoints less often.';
  const every = Number.isFinite(k.everyForBudget) ? k.everyForBudget : null;
  return (
    (every !== null
      ? `Save every ${every} iterations instead of every ${k.intervalIterations !== null ? Math.round(k.intervalIterations) : '?'}: ` +
        "it keeps checkpointing under 3.5% of the training time (CheckFreq's budget). "
      : '') +
    "Or save without blocking the step (torch.distributed.checkpoint.async_save, Lightning's AsyncCheckpointIO). " +
    "'ds-analyzer whatif --checkpoint-every K --write-bw RATE' predicts each choice, with the work a failure " +
    'would lose.'
  );
}

/** Keep the workers across epochs when they restart; otherwise the refill of an empty pipeline is what is left. */
function boundaryAdvice(c: TextContext): string {
  const b = c.boundary;
  if (b && b.persistentWorkers === false && (b.workers ?? 0) > 0)
    return (
      `The ${b.workers} loader workers start again at every epoch: keep them, DataLoader(..., ` +
      `persistent_workers=True)` +
      (c.loaderFramework === 'hf-trainer' ? ' (TrainingArguments(dataloader_persistent_workers=True))' : '') +
      ". 'ds-analyzer whatif --persistent-workers' predicts what is left."
    );
  return (
    'Each epoch starts with an empty pipeline: the first batch waits for its full preparation. Longer ' +
    'epochs (fewer, larger shards of work per epoch) spread it thinner.'
  );
}
