import type { Mode } from '../schema/events.js';
import type { StateProof } from '../schema/profile.js';
import type { KeeperMechanism } from '../system/keepers/keeper-types.js';
import { FETCH_WORDS, PROOF_TEXT } from './proof-text.js';
import type { FetchOrigin } from './data-sources/data-source.js';
import type { OtherReads } from './data-sources/fetch-meter.js';

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
  /** cached, answered in the job: at most this fraction of consumed bytes fetched over the network. */
  answeredMaxRead: 0.01,
  /** cached, answered in the job: at least this fraction of consumed bytes answered from the copy. */
  answeredMinLocal: 0.9,
} as const;

/**
 * What the data source says about one run: the state it set up (residency before the job), what its meter counted
 * during it, and what limits a proof on it. The local-file source's meter is read_bytes of the job's tree
 * (data-sources/local-files.ts); a remote source's would be the bytes that crossed the network. proveState reads no
 * counter itself.
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
  /**
   * Remote data answered in the job: bytes its hook answered from the local copy over the same window; absent where
   * nothing answers locally. A cached mode with them is judged on them, not on residency.
   */
  localBytes?: number;
  /** Where fetched bytes come from, as the reasons name it (default 'storage'). */
  fetchesFrom?: FetchOrigin;
  /** Whether the data fits in the memory available to hold it locally. */
  fitsInMemory: boolean;
  /** Evictions by the cold keeper after the initial one. */
  reEvictions?: number;
  /** Cold mode: other file pages on the active list when it started (PreparedState.otherActiveFile). */
  otherActiveFile?: { bytes: number; source: string };
  /** The cold keeper's mechanism and CPU, with the mode's wall time to turn that CPU into a share of one CPU. */
  keeper?: { mechanism: KeeperMechanism; cpuSec: number; fallbackReason?: string; modeWallSec: number };
  /** Why this data cannot hold this state whatever the readings say (tmpfs, NFS, FUSE for local files), or null. */
  sourceLimit?: string | null;
  /** Metered reads that may not be the data's (files outside --data): their bytes and the note naming them. */
  otherReads?: OtherReads | null;
  /**
   * Bytes read in the window while the training loader was idle between epochs (validation, checkpoints saved and
   * copied), already left out of readBytes; absent where no such span fell in the window.
   */
  asideBytes?: number;
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
 * Decides whether a mode ran in the cache state it claims: from residency before the run and the storage bytes the
 * job's tree read during it, then what can overrule them (a subset the job did not keep, a file system that cannot hold
 * the state, reads outside --data that could be all a cold mode's storage reads), and notes what the reason must also
 * say.
 */
export function proveState(input: ProofInput): StateProof {
  const measured = measuredVerdict(input);
  let verdict: { proven: boolean; reason: string } = input.subset ? subsetVerdict(measured, input.subset) : measured;
  if (input.asideBytes !== undefined)
    verdict = { ...verdict, reason: PROOF_TEXT.aside(verdict.reason, input.asideBytes) };
  if (input.sourceLimit) verdict = { proven: false, reason: input.sourceLimit };
  const outside = input.otherReads;
  if (!outside) return { ...measured, ...verdict };
  // Their storage reads are counted with the dataset's: a cold mode is proven only if the dataset's share alone would
  // be.
  const datasetOnly =
    measured.readBytes !== null && input.consumedBytes > 0
      ? Math.max(0, measured.readBytes - outside.bytes) / input.consumedBytes
      : null;
  if (input.mode === 'cold' && verdict.proven && datasetOnly !== null && datasetOnly < PROOF_THRESHOLDS.coldMinRead) {
    verdict = { proven: false, reason: PROOF_TEXT.otherReadsMayBeAll(verdict.reason, datasetOnly) };
  }
  return { ...measured, ...verdict, reason: `${verdict.reason}; ${outside.note}` };
}

/**
 * The cached mode on a subset holds only if the job sampled from the subset: it must say so in its start event
 * (subsetFiles). A job that never did ran on the whole dataset, which does not stay resident: unproven, with why.
 */
function subsetVerdict(
  measured: { proven: boolean; reason: string },
  { files, reason, jobSamples, jobNote }: SubsetEvidence,
): { proven: boolean; reason: string } {
  if (jobSamples === undefined) {
    return { proven: false, reason: PROOF_TEXT.subsetNotKept(reason, files, jobNote) };
  }
  return { proven: measured.proven, reason: PROOF_TEXT.onSubset(files, jobSamples, jobNote, measured.reason) };
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
    ...(input.otherActiveFile ? { otherActiveFile: input.otherActiveFile } : {}),
    ...(input.keeper ? { keeper: keeperCost(input.keeper) } : {}),
  };
  const verdict = (proven: boolean, reason: string): StateProof => ({ ...base, proven, reason });

  if (!input.jobAcknowledgedMode) return verdict(false, PROOF_TEXT.notAcknowledged(input.mode));
  if (input.mode === 'synthetic') return verdict(true, PROOF_TEXT.synthetic);
  const words = FETCH_WORDS[input.fetchesFrom ?? 'storage'];
  if (readFraction === null) {
    return verdict(false, PROOF_TEXT.unmeasured(words.unmeasured, input.readBytesSource));
  }
  const readText = PROOF_TEXT.readShare(readFraction, words.fetched);
  if (input.mode === 'cached' && input.localBytes !== undefined)
    return verdict(...answeredLocally(input, readFraction));
  if (input.mode === 'cached') {
    if (!input.fitsInMemory) return verdict(false, PROOF_TEXT.doesNotFit);
    if (resident < PROOF_THRESHOLDS.cachedMinResident) {
      return verdict(false, PROOF_TEXT.notResident(resident));
    }
    if (readFraction > PROOF_THRESHOLDS.cachedMaxRead) {
      return verdict(false, PROOF_TEXT.cacheDidNotHold(readText, estimateNote(input)));
    }
    return verdict(true, PROOF_TEXT.held(resident, readText));
  }
  if (resident > PROOF_THRESHOLDS.coldMaxResident) {
    return verdict(false, PROOF_TEXT.stillResident(resident));
  }
  if (readFraction < PROOF_THRESHOLDS.coldMinRead) {
    if (readFraction < PROOF_THRESHOLDS.cachedMaxRead) {
      // Evicted, yet hardly read: the iterations do not read --data (an in-memory dataset such as torchvision's MNIST
      // loads it at start-up).
      return verdict(
        false,
        input.consumedBytesEstimated
          ? PROOF_TEXT.hardlyReadEstimated(readText, estimateNote(input))
          : PROOF_TEXT.hardlyRead(readText),
      );
    }
    return verdict(false, PROOF_TEXT.partlyCached(readText, estimateNote(input)));
  }
  return verdict(true, PROOF_TEXT.held(resident, readText));
}

/**
 * A cached mode answered in the job (remote data): proven when at least 99% of the consumed bytes did not come over the
 * network and the copy answered most of them (a job whose reads went elsewhere, such as a cache of its own, did not
 * read the copy). The copy may hold a part of the dataset: the hook answers every request from it.
 */
function answeredLocally(input: ProofInput, readFraction: number): [boolean, string] {
  const local = (input.localBytes ?? 0) / input.consumedBytes;
  const text = PROOF_TEXT.answeredLocally(local, readFraction);
  if (readFraction > PROOF_THRESHOLDS.answeredMaxRead)
    return [false, PROOF_TEXT.copyDidNotHold(text, estimateNote(input))];
  if (local < PROOF_THRESHOLDS.answeredMinLocal) return [false, PROOF_TEXT.copyNotRead(text, estimateNote(input))];
  return [true, text];
}

function keeperCost({ modeWallSec, ...keeper }: NonNullable<ProofInput['keeper']>): NonNullable<StateProof['keeper']> {
  return { ...keeper, cpuShare: modeWallSec > 0 ? keeper.cpuSec / modeWallSec : 0 };
}

/** Says when the consumed bytes the fraction rests on are an estimate. */
function estimateNote(input: ProofInput): string {
  return input.consumedBytesEstimated ? PROOF_TEXT.estimateNote : '';
}
