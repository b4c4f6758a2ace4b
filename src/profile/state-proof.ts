import { ENV, type Mode } from '../schema/events.js';
import type { StateProof } from '../schema/profile.js';
import type { KeeperMechanism } from '../system/keepers/keeper-types.js';
import { percent as pct } from '../units.js';

/** Thresholds a mode's evidence must meet; see docs/method.md. */
const PROOF_THRESHOLDS = {
  /** cached: at least this fraction of the dataset resident before the run. */
  cachedMinResident: 0.95,
  /** cached: at most this fraction of consumed bytes read from storage. */
  cachedMaxRead: 0.05,
  /** cold: at most this fraction of the dataset resident before the run. */
  coldMaxResident: 0.05,
  /** cold: at least this fraction of consumed bytes read from storage. */
  coldMinRead: 0.9,
} as const;

export interface ProofInput {
  mode: Mode;
  /** Dataset bytes resident just before the job started. */
  residentBytesBefore: number;
  datasetBytes: number;
  /** Storage bytes read by the job's tree, or null when they could not be measured. */
  readBytes: number | null;
  readBytesSource: string;
  /** Bytes of samples the job consumed. */
  consumedBytes: number;
  /** Samples behind consumedBytes (the same window). */
  consumedSamples?: number;
  /** True when the job did not report bytes, so consumedBytes is samples x the dataset's mean file size. */
  consumedBytesEstimated?: boolean;
  /** Whether the job's start event acknowledged the mode. */
  jobAcknowledgedMode: boolean;
  /** Whether the dataset fits in memory available for the page cache. */
  fitsInMemory: boolean;
  reEvictions?: number;
  /** The cold keeper's mechanism and CPU, with the mode's wall time to turn that CPU into a share of one CPU. */
  keeper?: { mechanism: KeeperMechanism; cpuSec: number; fallbackReason?: string; modeWallSec: number };
  /** Why the dataset's file system cannot hold this state (tmpfs, NFS: file-systems.ts), or null. */
  fileSystemLimit?: string | null;
  /** The cached mode ran on a resident subset: what it offered and what the job said it kept. */
  subset?: SubsetEvidence;
  /** Files the job read outside --data: their bytes (file sizes) and the note naming them. */
  outsideReads?: { bytes: number; note: string } | null;
}

/** What the cached mode offered as a subset, and the job's answer from its start event. */
export interface SubsetEvidence {
  files: number;
  reason: 'does-not-fit' | 'warm-time';
  /** Samples the job kept (its start event's subsetFiles), or undefined when it never said. */
  jobSamples: number | undefined;
  /** The job's note on how it restricted itself (or why it could not). */
  jobNote: string | undefined;
}


/**
 * Decides whether a mode ran in the cache state it claims: from residency
 * before the run and the storage bytes the job's tree read during it, then
 * what can overrule them (a subset the job did not keep, a file system that
 * cannot hold the state, reads outside --data that could be all a cold
 * mode's storage reads), and notes what the reason must also say.
 */
export function proveState(input: ProofInput): StateProof {
  const measured = measuredVerdict(input);
  let verdict: { proven: boolean; reason: string } = input.subset ? subsetVerdict(measured, input.subset) : measured;
  if (input.fileSystemLimit) verdict = { proven: false, reason: input.fileSystemLimit };
  const outside = input.outsideReads;
  if (!outside) return { ...measured, ...verdict };
  // Their storage reads are counted with the dataset's: a cold mode is proven only if the dataset's share alone would be.
  const datasetOnly = measured.readBytes !== null && input.consumedBytes > 0 ? Math.max(0, measured.readBytes - outside.bytes) / input.consumedBytes : null;
  if (input.mode === 'cold' && verdict.proven && datasetOnly !== null && datasetOnly < PROOF_THRESHOLDS.coldMinRead) {
    verdict = { proven: false, reason: `${verdict.reason}, but as little as ${pct(datasetOnly)} may be the dataset's` };
  }
  return { ...measured, ...verdict, reason: `${verdict.reason}; ${outside.note}` };
}

/**
 * The cached mode on a subset holds only if the job sampled from the subset:
 * it must say so in its start event (subsetFiles). A job that never did ran
 * on the whole dataset, which does not stay resident: unproven, with why.
 */
function subsetVerdict(measured: { proven: boolean; reason: string }, { files, reason, jobSamples, jobNote }: SubsetEvidence): { proven: boolean; reason: string } {
  if (jobSamples === undefined) {
    return {
      proven: false,
      reason:
        `${reason === 'does-not-fit' ? 'the dataset does not fit in the memory budget' : 'warming the whole dataset would take too long'}, so the cached mode offered a resident subset of ${files} files (${ENV.subsetFile}), ` +
        `but the job never said it restricted itself to it${jobNote ? ` (${jobNote})` : ''}: it reads files that are not cached; ` +
        `use a torchvision ImageFolder/DatasetFolder or a dataset with a list of file paths, or honour ${ENV.subsetFile} (docs/protocol.md)`,
    };
  }
  return { proven: measured.proven, reason: `on a resident subset of ${files} files (the job kept ${jobSamples} samples${jobNote ? `: ${jobNote}` : ''}): ${measured.reason}` };
}

/** The verdict of the residency and the storage reads alone. */
function measuredVerdict(input: ProofInput): StateProof {
  const resident = input.datasetBytes > 0 ? input.residentBytesBefore / input.datasetBytes : 0;
  const readFraction =
    input.readBytes !== null && input.consumedBytes > 0 ? input.readBytes / input.consumedBytes : null;
  const base = {
    residentBytesBefore: input.residentBytesBefore,
    datasetBytes: input.datasetBytes,
    readBytes: input.readBytes,
    consumedBytes: input.consumedBytes,
    ...(input.consumedSamples !== undefined ? { consumedSamples: input.consumedSamples } : {}),
    readFraction,
    readBytesSource: input.readBytesSource,
    ...(input.reEvictions !== undefined ? { reEvictions: input.reEvictions } : {}),
    ...(input.keeper ? { keeper: keeperCost(input.keeper) } : {}),
  };
  const verdict = (proven: boolean, reason: string): StateProof => ({ ...base, proven, reason });

  if (!input.jobAcknowledgedMode) {
    return verdict(false, `the job never acknowledged ${input.mode} mode in a start event (is it speaking protocol v1?)`);
  }
  if (input.mode === 'synthetic') {
    return verdict(true, 'the job acknowledged synthetic mode: it replays its first batch without the loader');
  }
  if (readFraction === null) {
    return verdict(false, `storage reads of the job could not be measured (${input.readBytesSource})`);
  }
  const readText = `${pct(readFraction)} of consumed bytes read from storage`;
  if (input.mode === 'cached') {
    if (!input.fitsInMemory) return verdict(false, 'the dataset does not fit in memory, so it cannot stay cached');
    if (resident < PROOF_THRESHOLDS.cachedMinResident) {
      return verdict(false, `only ${pct(resident)} of the dataset was in the page cache before the run`);
    }
    if (readFraction > PROOF_THRESHOLDS.cachedMaxRead) {
      return verdict(false, `${readText}: the cache did not hold the dataset during the run, or the job read other files in the measured window (a validation set, checkpoints)${estimateNote(input)}`);
    }
    return verdict(true, `${pct(resident)} resident before the run; ${readText}`);
  }
  if (resident > PROOF_THRESHOLDS.coldMaxResident) {
    return verdict(false, `${pct(resident)} of the dataset was still in the page cache before the run`);
  }
  if (readFraction < PROOF_THRESHOLDS.coldMinRead) {
    if (readFraction < PROOF_THRESHOLDS.cachedMaxRead) {
      // Evicted, yet hardly read: the iterations do not read --data (an
      // in-memory dataset such as torchvision's MNIST loads it at start-up).
      return verdict(
        false,
        input.consumedBytesEstimated
          ? `only ${readText} although the dataset was not cached: either the job does not read --data during its iterations ` +
              `(it loads the dataset into memory before training, or reads from elsewhere), or it reads far less per sample than a whole file ` +
              `(a few large files read in parts, such as LMDB, HDF5 or tar shards)${estimateNote(input)}`
          : `only ${readText} although the dataset was not cached: the job does not read --data during its iterations ` +
              `(it may load the dataset into memory before training, or read from elsewhere), so there is no fetch to measure`,
      );
    }
    return verdict(false, `only ${readText}: part of the data came from a cache${estimateNote(input)}`);
  }
  return verdict(true, `${pct(resident)} resident before the run; ${readText}`);
}

function keeperCost({ modeWallSec, ...keeper }: NonNullable<ProofInput['keeper']>): NonNullable<StateProof['keeper']> {
  return { ...keeper, cpuShare: modeWallSec > 0 ? keeper.cpuSec / modeWallSec : 0 };
}

/** Says when the consumed bytes the fraction rests on are an estimate. */
function estimateNote(input: ProofInput): string {
  return input.consumedBytesEstimated
    ? ' (consumed bytes estimated as samples x the mean file size, one file per sample; the job did not report bytes)'
    : '';
}
