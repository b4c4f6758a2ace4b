import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fetchSample, isRemote } from './remote-read.js';
import { performance } from 'node:perf_hooks';
import { inflateSync } from 'node:zlib';
import { prepClock, type PrepClock } from './prep-clock.js';

/**
 * Pre-processing of samples, as a DataLoader worker does it: read the file (a real read through the page cache), decode
 * it, then transform the decoded bytes until `prepMs` have passed on the prep clock since decoding started
 * (./prep-clock.ts: wall time by default, or the thread's CPU time). When decoding alone takes longer, the sample takes
 * longer, and `decodeMs` says by how much. Reading is kept apart from decoding so that a worker can read its next batch
 * while it prepares this one (./worker.ts).
 */

/** What preparing one batch produced. */
export interface PreparedBatch {
  /** Samples in the batch. */
  samples: number;
  /** Bytes read from the sample files. */
  bytes: number;
  /** Total decode time of the batch's samples, ms. */
  decodeMs: number;
  /** Samples whose decoding alone took longer than prepMs (they took longer than asked). */
  overruns: number;
  /** A value computed from every decoded byte touched (keeps the work observable). */
  digest: number;
}

/** What preparing one sample produced. */
export interface PreparedSample {
  /** Bytes read from the sample file. */
  bytes: number;
  /** Decode time, ms. */
  decodeMs: number;
  /** A value computed from the decoded bytes. */
  digest: number;
  /** When the sample's prep time ended, on the prep clock of this thread. */
  deadlineMs: number;
}

// Bytes transformed between two looks at the clock: about 10-20 microseconds of work.
const SLICE_BYTES = 16 * 1024;
// The CPU clock is a syscall: look at it only after this much wall time, and at every slice once the deadline is near.
const CPU_CLOCK_EVERY_MS = 0.25;

let clockKind: PrepClock = 'wall';
let now: () => number = () => performance.now();

/** Chooses the clock prep time is counted on, for this thread. */
export function usePrepClock(kind: PrepClock): void {
  clockKind = kind;
  now = prepClock(kind);
}

function transformUntil(decoded: Uint8Array, deadlineMs: number): number {
  // Per-channel normalisation (x - mean) / std, as image pipelines do after decoding.
  let acc = 0;
  let offset = 0;
  let clockMs = now();
  let lookedAtWallMs = performance.now();
  while (clockMs < deadlineMs) {
    if (decoded.length === 0) acc += 1;
    else {
      const end = Math.min(offset + SLICE_BYTES, decoded.length);
      for (let i = offset; i < end; i++) acc += (decoded[i] - 127.5) * 0.0078125;
      offset = end === decoded.length ? 0 : end;
    }
    if (clockKind === 'wall') clockMs = now();
    else {
      const wallMs = performance.now();
      if (wallMs - lookedAtWallMs >= CPU_CLOCK_EVERY_MS || deadlineMs - clockMs < 2 * CPU_CLOCK_EVERY_MS) {
        clockMs = now();
        lookedAtWallMs = wallMs;
      }
    }
  }
  return acc;
}

/**
 * Decodes and transforms the bytes of one sample file until `prepMs` of wall clock have passed since decoding started,
 * or since `fromMs` when given: a worker going straight on from its previous sample passes that sample's deadline, so
 * that a busy worker prepares exactly one sample per prepMs. On a shared machine a thread is often descheduled when its
 * deadline passes and resumes a time slice later (a few ms under CFS, more on a loaded machine); without the carry that
 * lateness would add to every sample. At most prepMs is carried (the sample is then only decoded), so a long stall is
 * not made up by skipping the work of several samples.
 */
export function prepareData(data: Uint8Array, prepMs: number, fromMs?: number): PreparedSample {
  const startMs = now();
  const decoded = inflateSync(data);
  const decodeMs = now() - startMs;
  const deadlineMs = (fromMs === undefined ? startMs : Math.max(fromMs, startMs - prepMs)) + prepMs;
  const digest = transformUntil(decoded, deadlineMs);
  return { bytes: data.length, decodeMs, digest, deadlineMs };
}

/** Reads, decodes and transforms one sample file, synchronously. */
export function prepareSample(path: string, prepMs: number): PreparedSample {
  return prepareData(readFileSync(path), prepMs);
}

/**
 * Starts reading every file of a batch at once. The reads run in libuv's threadpool, so they proceed while the calling
 * thread prepares other samples.
 */
export function readBatch(paths: readonly string[]): Promise<Buffer[]> {
  return Promise.all(paths.map((path) => (isRemote(path) ? fetchSample(path) : readFile(path))));
}

/** Accumulates the samples of one batch. */
export class BatchAccumulator {
  private bytes = 0;
  private decodeMs = 0;
  private overruns = 0;
  private digest = 0;
  private samples = 0;

  constructor(private readonly prepMs: number) {}

  /** Adds one prepared sample. */
  add(sample: PreparedSample): void {
    this.samples++;
    this.bytes += sample.bytes;
    this.decodeMs += sample.decodeMs;
    if (this.prepMs > 0 && sample.decodeMs > this.prepMs) this.overruns++;
    this.digest += sample.digest;
  }

  /** The batch so far. */
  result(): PreparedBatch {
    return {
      samples: this.samples,
      bytes: this.bytes,
      decodeMs: this.decodeMs,
      overruns: this.overruns,
      digest: this.digest,
    };
  }
}

/** Reads and prepares every sample of a batch in turn, synchronously (a DataLoader with num_workers=0). */
export function prepareBatch(paths: readonly string[], prepMs: number): PreparedBatch {
  const batch = new BatchAccumulator(prepMs);
  for (const path of paths) batch.add(prepareSample(path, prepMs));
  return batch.result();
}
