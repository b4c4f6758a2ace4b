// When a block's figures cannot stand: its fetches stalled (no byte came while the job waited on data, or its requests
// failed), its job stopped making progress (the watchdog), or --timeout ended it before it measured enough. Such a
// block is marked `stalled` on its result, is not proven, and its figures stay out of the split and the verdict
// (split.ts). Pure: readings in, a decision out.
import type { Mode } from '../schema/events.js';
import type { Stall } from '../schema/profile.js';
import { median } from './stats.js';
import { STALL_TEXT } from './stall-text.js';

/** The limits of the decisions below (docs/method.md, "Stalled blocks"). */
export const STALL_LIMITS = {
  /**
   * A cold block with no fetched byte and no batch for this long, s, where the batch after it waited most of that time
   * (or none came), stalled: a stream that crawls still moves bytes every second, a frozen one does not.
   */
  noBytesSec: 10,
  /** Failed requests at least this share of a block's requests (and at least one) stall it. */
  failedShare: 0.01,
  /**
   * A meter's reading this soon after a block's end, ms, still counts the block's failed requests: the meter is read at
   * a poll, and a job its failures ended may be gone before the next one (seen: a job failed 4.7 s into a block whose
   * last reading inside it came before its failures).
   */
  lateReadingMs: 1000,
  /** The watchdog: a job with no iteration for this many times its median iteration looks hung... */
  hungFactor: 30,
  /** ...once that is at least this long, s (profile --hang-timeout's default)... */
  hungMinSec: 60,
  /**
   * ...while its processes used less than this share of one CPU: a validation pass or a save between iterations keeps
   * them busy, a deadlocked loader or a wait on a frozen endpoint does not.
   */
  hungMaxCpuShare: 0.1,
} as const;

/** A meter's cumulative reading: bytes fetched, and (where the meter counts them) requests and failed requests. */
export interface MeterReading {
  /** ms since the epoch. */
  t: number;
  bytes: number;
  requests?: number;
  failures?: number;
}

/** A batch the job got: when (ms since the epoch) and how long it waited for it, ms. */
export interface Arrival {
  t: number;
  waitMs: number;
}

/** The block a decision is about. */
export interface StallBlock {
  mode: Mode;
  /** ms since the epoch. */
  startedAt: number;
  endedAt: number;
  /** Whether --timeout or the watchdog ended it: a silence up to its end counts only then. */
  endedByTimeout: boolean;
  /** Where fetched bytes come from, as the words name it. */
  fetchesFrom: 'storage' | 'network';
}

/** The fetch stall of a block from its meter's readings and its batches, or null where its fetches did not stall. */
export function fetchStall(
  readings: readonly MeterReading[],
  arrivals: readonly Arrival[],
  block: StallBlock,
  noBytesSec: number = STALL_LIMITS.noBytesSec,
): Stall | null {
  return (
    requestErrors(readings, block) ?? (block.mode === 'cold' ? silence(readings, arrivals, block, noBytesSec) : null)
  );
}

/** Failed requests over the block: at least one, and at least STALL_LIMITS.failedShare of its requests. */
function requestErrors(readings: readonly MeterReading[], block: StallBlock): Stall | null {
  const until = block.endedAt + STALL_LIMITS.lateReadingMs;
  const within = readings.filter((r) => r.t >= block.startedAt && r.t <= until && r.failures !== undefined);
  if (within.length < 2) return null;
  const first = within[0];
  const last = within[within.length - 1];
  const failures = last.failures! - first.failures!;
  const requests = Math.max(failures, (last.requests ?? 0) - (first.requests ?? 0));
  if (failures < 1 || failures < STALL_LIMITS.failedShare * requests) return null;
  const at = within.find((r) => r.failures! > first.failures!)!;
  const atSec = Math.max(0, (at.t - block.startedAt) / 1000);
  return { cause: 'request-errors', atSec, text: STALL_TEXT.requestErrors(block.mode, atSec, failures, requests) };
}

/**
 * The longest time in the block when neither a byte nor a batch came, where the job waited on data through at least
 * noBytesSec of it: the batch after it had been waited for that long within it, or none came before a timeout ended the
 * block. A long step (the loader's prefetch full, nothing to fetch) ends with a batch that hardly waited; a start-up
 * (imports, a model loaded) with a batch asked for only near its end.
 */
function silence(
  readings: readonly MeterReading[],
  arrivals: readonly Arrival[],
  block: StallBlock,
  noBytesSec: number,
): Stall | null {
  const rises = readings.filter((r, k) => k > 0 && r.bytes > readings[k - 1].bytes).map((r) => r.t);
  const events = [...rises, ...arrivals.map((a) => a.t)]
    .filter((t) => t > block.startedAt && t < block.endedAt)
    .sort((a, b) => a - b);
  const bounds = [block.startedAt, ...events, block.endedAt];
  let worst: Stall | null = null;
  for (let k = 1; k < bounds.length; k++) {
    const from = bounds[k - 1];
    const silentSec = (bounds[k] - from) / 1000;
    if (silentSec < noBytesSec || (worst !== null && silentSec * 1000 <= worstMs(worst))) continue;
    const toEnd = k === bounds.length - 1;
    const next = arrivals.find((a) => a.t >= bounds[k]);
    // The batch after it waited through noBytesSec of it (a start-up's silence ends in a shorter wait); no batch after
    // it: the job waited until the block ended, which only a timeout (or the watchdog) does.
    const waited =
      next === undefined ? block.endedByTimeout : bounds[k] - Math.max(from, next.t - next.waitMs) >= noBytesSec * 1000;
    if (!waited) continue;
    const atSec = (from - block.startedAt) / 1000;
    worst = {
      cause: 'no-bytes',
      atSec,
      silentSec,
      text: STALL_TEXT.noBytes(block.mode, block.fetchesFrom, atSec, silentSec, toEnd),
    };
  }
  return worst;
}

const worstMs = (stall: Stall): number => (stall.silentSec ?? 0) * 1000;

/**
 * A block --timeout ended, or the job itself ended well (its epochs done), before it measured minIterations: its few
 * figures are not a measurement.
 */
export function timeoutStall(
  block: { mode: Mode; endedByTimeout: boolean; endedByJob?: boolean; wallSec: number; ran?: number },
  measuredIterations: number,
  minIterations: number,
  timeoutSec: number,
): Stall | null {
  if (measuredIterations >= minIterations) return null;
  if (block.endedByTimeout)
    return {
      cause: 'timeout',
      atSec: block.wallSec,
      text: STALL_TEXT.timedOut(block.mode, timeoutSec, measuredIterations, minIterations),
    };
  if (!block.endedByJob) return null;
  return {
    cause: 'ended',
    atSec: block.wallSec,
    text: STALL_TEXT.endedEarly(block.mode, block.ran ?? measuredIterations, measuredIterations, minIterations),
  };
}

/** An iteration of the job as the watchdog reads it: its wait and step, ms. */
export interface WatchedIteration {
  waitMs: number;
  computeMs: number;
}

/** The watchdog's finding: how long since the last iteration, against the median. */
export interface Hang {
  /** When the last iteration was seen, ms since the epoch (the profiler's clock). */
  lastAt: number;
  sinceSec: number;
  medianSec: number;
  text: string;
}

/**
 * Whether the job stopped making progress: no new iteration (of any process) seen since `lastAt` for hungFactor times
 * its median iteration (wait and step) and at least minSec, its processes using under hungMaxCpuShare of a CPU
 * meanwhile (`cpuShare`; null: not measured). The times are the profiler's own clock, not the job's. Null before its
 * first iteration (--first-iteration-timeout covers that).
 */
export function hangOf(
  iterations: readonly WatchedIteration[],
  lastAt: number,
  nowMs: number,
  minSec: number = STALL_LIMITS.hungMinSec,
  cpuShare: number | null = null,
): Hang | null {
  if (iterations.length === 0 || (cpuShare !== null && cpuShare >= STALL_LIMITS.hungMaxCpuShare)) return null;
  const factor = STALL_LIMITS.hungFactor;
  const medianSec = Math.max(1e-3, median(iterations.map((it) => it.waitMs + it.computeMs)) / 1000);
  const sinceSec = (nowMs - lastAt) / 1000;
  if (sinceSec < minSec || sinceSec < factor * medianSec) return null;
  return { lastAt, sinceSec, medianSec, text: STALL_TEXT.hung(sinceSec, medianSec) };
}

/**
 * A block's stall, the first that applies: its fetches (the more exact cause where the watchdog also fired: a job
 * waiting on an endpoint that sent nothing looks hung too), the watchdog's, or a timeout that left too few iterations.
 */
export function blockStall(
  mode: Mode,
  startedAt: number,
  found: { hang: Hang | null; fetch: Stall | null; timeout: Stall | null },
): Stall | null {
  const { hang, fetch, timeout } = found;
  if (fetch && hang) return { ...fetch, text: STALL_TEXT.fetchAndHung(fetch.text, hang.text) };
  if (fetch) return fetch;
  if (hang) {
    const atSec = Math.max(0, (hang.lastAt - startedAt) / 1000);
    return { cause: 'hung', atSec, text: STALL_TEXT.hungInBlock(mode, atSec, hang.sinceSec, hang.medianSec) };
  }
  return timeout;
}
