import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { inflateSync } from 'node:zlib';

/**
 * Pre-processing of one sample, as a DataLoader worker does it: read the file
 * (a real read through the page cache), decode it, then transform the decoded
 * bytes until `prepMs` of wall-clock time have passed since the read finished.
 * Wall clock, not CPU time: on a busy machine the sample still costs the worker
 * `prepMs`, so runs are comparable. When decoding alone takes longer, the sample
 * takes longer, and `decodeMs` says by how much.
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

// Bytes transformed between two looks at the clock: about 10-20 microseconds of work.
const SLICE_BYTES = 16 * 1024;

function transformUntil(decoded: Uint8Array, deadlineMs: number): number {
  // Per-channel normalisation (x - mean) / std, as image pipelines do after decoding.
  let acc = 0;
  let offset = 0;
  if (decoded.length === 0) {
    while (performance.now() < deadlineMs) acc += 1;
    return acc;
  }
  while (performance.now() < deadlineMs) {
    const end = Math.min(offset + SLICE_BYTES, decoded.length);
    for (let i = offset; i < end; i++) acc += (decoded[i] - 127.5) * 0.0078125;
    offset = end === decoded.length ? 0 : end;
  }
  return acc;
}

/** Reads, decodes and transforms one sample file. */
export function prepareSample(path: string, prepMs: number): { bytes: number; decodeMs: number; digest: number } {
  const data = readFileSync(path);
  const readDoneMs = performance.now();
  const decoded = inflateSync(data);
  const decodeMs = performance.now() - readDoneMs;
  const digest = transformUntil(decoded, readDoneMs + prepMs);
  return { bytes: data.length, decodeMs, digest };
}

/** Prepares every sample of a batch in turn (one DataLoader worker builds a whole batch). */
export function prepareBatch(paths: readonly string[], prepMs: number): PreparedBatch {
  let bytes = 0;
  let decodeMs = 0;
  let overruns = 0;
  let digest = 0;
  for (const path of paths) {
    const sample = prepareSample(path, prepMs);
    bytes += sample.bytes;
    decodeMs += sample.decodeMs;
    if (prepMs > 0 && sample.decodeMs > prepMs) overruns++;
    digest += sample.digest;
  }
  return { samples: paths.length, bytes, decodeMs, overruns, digest };
}
