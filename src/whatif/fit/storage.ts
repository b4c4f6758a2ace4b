/**
 * The fetch stage: the storage's read bandwidth (B_storage) and the share of fetch and prep that runs in series (σ,
 * ../overlap.ts), fitted together because one measurement can explain either. In order of preference:
 *   1. a cold mode that waited on storage yet read well below the throttle
 *      the profile set: B is the throttle, σ explains the shortfall;
 *   2. the overlap probe (profile --overlap): σ and B from the cold mode and
 *      the probe together;
 *   3. neither: B as the cold mode read it (or the throttle), σ = 0 assumed,
 *      with the largest σ the cold mode allows kept for answers that must
 *      hold whatever the overlap.
 */
import type { IterationSummary, Profile, StorageProbe } from '../../schema/profile.js';
import { formatRate } from '../../units.js';
import { MISSING_TEXT } from '../advice-text.js';
import { fitOverlap, fitOverlapJoint, largestSerial, PERFECT_OVERLAP, type OverlapInputs } from '../overlap.js';
import { notEnoughData, parameter, type Fitted, type NotEnoughData } from './fitted.js';
import { coldMissing, loaderSetPace, proven, type MeasuredModes } from './modes.js';

/** A cold mode that read below this share of its throttle did not keep storage busy. */
const UNSATURATED_SHARE = 0.9;

/** The fetch stage as fitted. */
export interface StorageFit {
  /** Storage read bandwidth, bytes/s, at the job's read concurrency. */
  storageBytesPerSec: number;
  /**
   * True when the cold mode was not storage-bound and no proven read probe measured the storage, so storageBytesPerSec
   * is only what the job asked for.
   */
  storageIsLowerBound: boolean;
  /** Share of fetch and prep that runs in series, σ (../overlap.ts): 0 for perfect overlap, 1 for none. */
  fetchPrepSerial: number;
  /**
   * True when σ was measured (a cold mode that waited on storage below its throttle, or the overlap probe). Otherwise σ
   * = 0 is an assumption: a cold mode that kept storage busy shows nothing of how reads and pre-processing overlap.
   */
  overlapMeasured: boolean;
  /**
   * The largest σ the cold mode allows (its time per sample at the upper end of its 95% interval), for answers that
   * must hold whatever the unmeasured overlap; equals fetchPrepSerial when the overlap was measured.
   */
  serialUpperBound: number;
}

/** What the storage fit needs from the fits before it, per sample at the profiled settings. */
export interface StorageFitInputs {
  /**
   * What reads can hide behind per sample, s: the step (T_gpu / b with the loader's hand-over and contention) or the
   * pace prep sets, the larger.
   */
  computeSec: number;
  /** Prep per sample that reads can run in series with, s: the loader workers' own (model.ts, dataSec). */
  prepSec: number;
  /** Storage bytes all ranks read per sample on a miss (R * a * s). */
  missBytesPerSample: number;
  /** The cached mode's time (pooled with any sweep repeats, prep-cpu.ts): fetch-bound is judged against it. */
  cachedTime: IterationSummary;
  /**
   * Remote data seen request by request: the cold mode's fetch rate is what the job's requests in flight got (the
   * model's request term, remote-requests.ts), not what the network carries, which only the network probe (many
   * requests at once) or a cap says.
   */
  requestPaced?: boolean;
}

/** B_storage and σ with what each came from. */
interface Candidate {
  /** B_storage, bytes/s. */
  storageBytesPerSec: number;
  /** Where B_storage came from. */
  storageSource: string;
  /** σ. */
  serial: number;
  /** Where σ came from. */
  serialSource: string;
  /** Whether σ was measured. */
  measured: boolean;
}

/** What every overlap fit starts from: compute, prep and the cold mode's time, per sample as profiled, s. */
type ProfiledStages = Omit<OverlapInputs, 'fetchSec'>;

/** Latency explains at least this share of a probe's time: its rate is then a bound on the bandwidth, not a measure. */
const LATENCY_BOUND_SHARE = 0.9;

/**
 * The bandwidth behind a read probe. Files: its rate. Remote data: q requests of s bytes in flight, each waiting L for
 * its first byte and then sharing the bandwidth B, deliver R = q s / (L + q s / B), as the model predicts fetches
 * (model.ts, stageTimes); so 1/B = 1/R - L/(q s), the rate less what the waits took. L is the wait of requests sent one
 * at a time (idleFirstByteMs): on a full link the loaded requests' first bytes wait behind each other's bytes, and
 * taking that wait for latency read a 3.8 MB/s link as 6.6 MB/s. Older profiles have only the loaded wait. Where the
 * waits explain 90% of the probe's time or more, B is known only from below (R).
 */
export function probeBandwidth(probe: StorageProbe): {
  bytesPerSec: number;
  latencyShare: number;
  lowerBound: boolean;
} {
  const waitSecPerByte = probeLatencyMs(probe) / 1000 / (probe.concurrency * probe.requestBytes);
  const latencyShare = Math.min(1, waitSecPerByte * probe.bytesPerSec);
  if (latencyShare >= LATENCY_BOUND_SHARE) return { bytesPerSec: probe.bytesPerSec, latencyShare, lowerBound: true };
  return { bytesPerSec: 1 / (1 / probe.bytesPerSec - waitSecPerByte), latencyShare, lowerBound: false };
}

/**
 * The probe's latency, ms: the wait for a first byte with nothing ahead of it, else (older profiles) under load; 0 for
 * files.
 */
function probeLatencyMs(probe: StorageProbe): number {
  return probe.idleFirstByteMs ?? probe.firstByteMs ?? 0;
}

/** How the probe's rate became B: less its requests' waits for a first byte (remote data). */
function probeLatencyNote(probe: StorageProbe, probed: ReturnType<typeof probeBandwidth>): string {
  if (probe.firstByteMs === undefined) return '';
  const wait =
    probe.idleFirstByteMs !== undefined
      ? `its requests sent one at a time waited ${probe.idleFirstByteMs.toFixed(1)} ms for a first byte ` +
        `(${probe.firstByteMs.toFixed(1)} ms under load)`
      : `its requests waited ${probe.firstByteMs.toFixed(1)} ms for a first byte`;
  return probed.lowerBound
    ? `; ${wait}, ${Math.round(probed.latencyShare * 100)}% of its time, so ` +
        `its ${formatRate(probe.bytesPerSec)} bounds the bandwidth from below`
    : `: ${formatRate(probe.bytesPerSec)}, less the ${Math.round(probed.latencyShare * 100)}% of its time ${wait}`;
}

/** B_storage and σ; not enough data when the cold mode has no storage read rate. */
export function fitStorage(
  profile: Profile,
  modes: MeasuredModes,
  inputs: StorageFitInputs,
): Fitted<StorageFit> | NotEnoughData {
  const { synthetic, cached, cold } = modes;
  if (cold === null) return coldMissing(profile) ?? notEnoughData('modes.cold', 'cold');
  const readRate = cold.storageReadBytesPerSec;
  if (readRate === null || !(readRate > 0)) return notEnoughData('modes.cold.storageReadBytesPerSec', 'cold');
  // Bandwidth set the pace only where the loader waited on it: not where the job's own requests did.
  const fetchBound = loaderSetPace(cold.summary, inputs.cachedTime) && !inputs.requestPaced;
  const throttle = profile.options.storageBwBytesPerSec;
  // Storage that never set the pace is known from its own read probe, else only from below.
  const probe = !fetchBound && throttle === null && profile.storageProbe?.proven ? profile.storageProbe : null;
  const probed = probe && probeBandwidth(probe);
  const storageIsLowerBound = !fetchBound && throttle === null && (probed === null || probed.lowerBound);
  const stages: ProfiledStages = {
    computeSec: inputs.computeSec,
    prepSec: inputs.prepSec,
    coldSec: cold.summary.iterMs.mean / 1000 / cold.summary.samplesPerIter,
  };
  const asRead = asReadCandidate(fetchBound, throttle, probe, readRate);
  const fromColdMode =
    fetchBound && throttle !== null && readRate < UNSATURATED_SHARE * throttle
      ? belowThrottle(asRead, stages, inputs.missBytesPerSample, throttle, readRate)
      : null;
  const fit = fromColdMode ??
    withProbe(profile, stages, inputs.missBytesPerSample, readRate) ?? {
      ...asRead,
      serialSource: `${asRead.serialSource}; assumed: not measured (profile --overlap measures it)`,
    };
  const serialUpperBound = fit.measured ? fit.serial : Math.max(fit.serial, widestSerial(stages, inputs, fit, cold));
  return {
    kind: 'fitted',
    value: {
      storageBytesPerSec: fit.storageBytesPerSec,
      storageIsLowerBound,
      fetchPrepSerial: fit.serial,
      overlapMeasured: fit.measured,
      serialUpperBound,
    },
    parameters: [
      parameter(
        'B_storage',
        'storage read bandwidth at the job read concurrency',
        fit.storageBytesPerSec,
        'bytes/s',
        fit.storageSource,
        proven(cold),
        storageIsLowerBound ? 'lower bound: storage was not the limit in the cold mode' : undefined,
      ),
      parameter(
        'σ',
        'share of fetch and prep in series: data time (prep^(1/σ) + fetch^(1/σ))^σ',
        fit.serial,
        'share',
        fit.serialSource,
        proven(synthetic, cached, cold),
      ),
    ],
    caveats: storageIsLowerBound ? [MISSING_TEXT.storageLowerBound] : [],
  };
}

/** The bandwidth as the cold mode read it, its throttle, or its probe, with where it comes from; σ not yet fitted. */
function asReadCandidate(
  fetchBound: boolean,
  throttle: number | null,
  probe: StorageProbe | null,
  readRate: number,
): Candidate {
  const probed = probe && probeBandwidth(probe);
  return {
    storageBytesPerSec:
      !fetchBound && throttle !== null ? throttle : probed ? Math.max(probed.bytesPerSec, readRate) : readRate,
    storageSource: fetchBound
      ? 'cold mode storageReadBytesPerSec (cold mode was storage-bound)'
      : throttle !== null
        ? 'options.storageBwBytesPerSec (the throttle; cold mode was not storage-bound)'
        : probe !== null && probed !== null
          ? `storageProbe.bytesPerSec (a read probe of ${probe.files} evicted files, ${probe.concurrency} at ` +
            `once${probeLatencyNote(probe, probed)}; the cold mode, not storage-bound, read ${formatRate(readRate)})`
          : 'cold mode storageReadBytesPerSec',
    serial: PERFECT_OVERLAP,
    serialSource: 'perfect overlap (the max of the two stages)',
    measured: false,
  };
}

/** The most σ the cold mode allows at the fitted bandwidth, where σ was not measured. */
function widestSerial(
  stages: ProfiledStages,
  inputs: StorageFitInputs,
  fit: Candidate,
  cold: NonNullable<MeasuredModes['cold']>,
): number {
  return largestSerial({
    ...stages,
    fetchSec: inputs.missBytesPerSample / fit.storageBytesPerSec,
    // The upper end of the cold mode's 95% interval: the most σ it allows. A cold mode that ran faster than the step as
    // fitted (the machine's pace moved) bounds σ no tighter than the step does.
    coldSec: Math.max(
      stages.computeSec,
      stages.coldSec + (cold.summary.iterMs.halfWidth ?? 0) / 1000 / cold.summary.samplesPerIter,
    ),
  });
}

/**
 * σ from a cold mode that waited on storage yet read well below its throttle: the storage's true rate is known, so the
 * shortfall is time the job spent not reading. Null when no σ explains the cold time (storage slower than its
 * throttle), so the probe may still say.
 */
function belowThrottle(
  asRead: Candidate,
  stages: ProfiledStages,
  missBytesPerSample: number,
  throttle: number,
  readRate: number,
): Candidate | null {
  const serial = fitOverlap({ ...stages, fetchSec: missBytesPerSample / throttle });
  if (serial === null) return null;
  // The max of the stages explains the cold time: measured, and nothing to change.
  if (serial === PERFECT_OVERLAP) return { ...asRead, measured: true };
  return {
    storageBytesPerSec: throttle,
    storageSource:
      `options.storageBwBytesPerSec (the throttle; the cold mode read ${formatRate(readRate)}: its ` +
      `workers alternated reading and pre-processing)`,
    serial,
    serialSource: 'fitted: the cold mode time per sample, prep from the cached mode, fetch at the throttle',
    measured: true,
  };
}

/**
 * σ and B together from the cold mode and a proven overlap probe: the cold mode run once more with part of the dataset
 * resident, fetch and prep balanced (../overlap.ts, fitOverlapJoint). Null without a usable probe.
 */
function withProbe(
  profile: Profile,
  stages: ProfiledStages,
  missBytesPerSample: number,
  readRate: number,
): Candidate | null {
  const probe = profile.overlapProbe;
  if (probe?.status !== 'ok' || !probe.summary || !probe.state.proven) return null;
  const fitted = fitOverlapJoint({
    ...stages,
    probeSec: probe.summary.iterMs.mean / 1000 / probe.summary.samplesPerIter,
    share: probe.residentShare,
  });
  if (fitted === null) return null;
  const held = `${(probe.residentShare * 100).toFixed(0)}% of the dataset held resident`;
  return {
    storageBytesPerSec: missBytesPerSample / fitted.fetchSec,
    storageSource: `fitted with σ: the cold mode and the overlap probe (the cold mode read ${formatRate(readRate)})`,
    serial: fitted.serial,
    serialSource: `fitted with B_storage: the cold mode and the overlap probe (cold, ${held})`,
    measured: true,
  };
}
