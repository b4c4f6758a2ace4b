import { ENV, type Mode } from '../schema/events.js';
import type { StateProof } from '../schema/profile.js';
import type { KeeperMechanism } from '../system/keeper-types.js';
import { percent as pct } from '../units.js';
import type { FetchOrigin, OtherReads } from './data-sources/data-source.js';

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

/**
 * What the data source says about one run: the state it set up (residency
 * before the job), what its meter counted during it, and what limits a proof
 * on it. The local-file source's meter is read_bytes of the job's tree
 * (data-sources/local-files.ts); a remote source's would be the bytes that
 * crossed the network. proveState reads no counter itself.
 */
export interface SourceEvidence {
  /** Data bytes held locally (the page cache) just before the job started. */
  residentBytesBefore: number;
  /** Bytes of the data the mode ran on (the resident subset's, on one). */
  datasetBytes: number;
  /** Bytes the job fetched from storage (or the network), or null when they could not be measured. */
  readBytes: number | null;
  /** How readBytes was measured, or why it could not be. */
  readBytesSource: string;
  /** Where fetched bytes come from, as the reasons name it (default 'storage'). */
  fetchesFrom?: FetchOrigin;
  /** Whether the data fits in the memory available to hold it locally. */
  fitsInMemory: boolean;
  /** Evictions by the cold keeper after the initial one. */
  reEvictions?: number;
  /** The cold keeper's mechanism and CPU, with the mode's wall time to turn that CPU into a share of one CPU. */
  keeper?: { mechanism: KeeperMechanism; cpuSec: number; fallbackReason?: string; modeWallSec: number };
  /** Why this data cannot hold this state whatever the readings say (tmpfs, NFS, FUSE for local files), or null. */
  sourceLimit?: string | null;
  /** Reads the meter counted that may not be the data's (files outside --data): their bytes and the note naming them. */
  otherReads?: OtherReads | null;
}

/** A run's evidence: the data source's, and the job's own (its events). */
export interface ProofInput extends SourceEvidence {
  mode: Mode;
  /** Bytes of samples the job consumed. */
  consumedBytes: number;
  /** Samples behind consumedBytes (the same window). */
  consumedSamples?: number;
  /** True when the job did not report bytes, so consumedBytes is samples x the dataset's mean file size. */
  consumedBytesEstimated?: boolean;
  /** Whether the job's start event acknowledged the mode. */
  jobAcknowledgedMode: boolean;
  /** The cached mode ran on a resident subset: what it offered and what the job said it kept. */
  subset?: SubsetEvidence;
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
  if (input.sourceLimit) verdict = { proven: false, reason: input.sourceLimit };
  const outside = input.otherReads;
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

/** How the reasons name fetched bytes, by where they come from. */
const FETCH_WORDS = {
  storage: { fetched: 'read from storage', unmeasured: 'storage reads of the job could not be measured' },
  network: { fetched: 'fetched over the network', unmeasured: 'the bytes the job fetched over the network could not be measured' },
} as const;

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
  const words = FETCH_WORDS[input.fetchesFrom ?? 'storage'];
  if (readFraction === null) {
    return verdict(false, `${words.unmeasured} (${input.readBytesSource})`);
  }
  const readText = `${pct(readFraction)} of consumed bytes ${words.fetched}`;
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
