/**
 * Hand-made ModeResults for the split tests: a summary with a chosen mean and
 * half-width, and the fields analyze() reads.
 */
import type { Mode } from '../../src/schema/events.js';
import type { IterationSummary, ModeResult } from '../../src/schema/profile.js';

export interface ModeSpec {
  /** Per-iteration time, ms. */
  iterMs: number;
  /** Its 95% half-width, ms (null: unknown). */
  halfWidth?: number | null;
  samplesPerIter?: number;
  proven?: boolean;
  reason?: string;
  status?: ModeResult['status'];
  stopReason?: ModeResult['stopReason'];
  noSummary?: boolean;
  jobCpuSecPerSample?: number | null;
  storageReadBytesPerSec?: number | null;
  consumedBytes?: number;
  /** Mean time between batches, ms (default: the whole iteration, i.e. no wait). */
  computeMs?: number;
  /** Samples reported in the raw iterations of the single rank. */
  totalSamples?: number;
}

export function summary(
  iterMs: number,
  halfWidth: number | null,
  samplesPerIter = 32,
  computeMs = iterMs,
): IterationSummary {
  return {
    warmupIterations: 1,
    measuredIterations: 600,
    blockSize: 6,
    blocks: 100,
    iterMs: { mean: iterMs, halfWidth, proven: true },
    waitMs: { mean: iterMs - computeMs, halfWidth, proven: true },
    computeMs: { mean: computeMs, halfWidth, proven: true },
    samplesPerIter,
    samplesPerSec: samplesPerIter / (iterMs / 1000),
    medianIterMs: iterMs,
    relativePrecision: halfWidth === null ? null : halfWidth / iterMs,
  };
}

export function modeResult(mode: Mode, spec: ModeSpec): ModeResult {
  const s = spec.noSummary
    ? null
    : summary(spec.iterMs, spec.halfWidth === undefined ? 1 : spec.halfWidth, spec.samplesPerIter, spec.computeMs);
  const totalSamples = spec.totalSamples ?? 601 * (spec.samplesPerIter ?? 32);
  return {
    mode,
    status: spec.status ?? 'ok',
    stopReason: spec.stopReason ?? 'precision',
    jobExitCode: 0,
    jobSignal: null,
    startedAt: 1_700_000_000_000,
    wallSec: 60,
    state: {
      proven: spec.proven ?? true,
      reason: spec.reason ?? 'checked',
      residentBytesBefore: 0,
      datasetBytes: 1e9,
      readBytes: null,
      consumedBytes: spec.consumedBytes ?? 0,
      consumedSamples: totalSamples,
      readFraction: null,
      readBytesSource: 'test',
    },
    ranks: [
      {
        rank: 0,
        pid: 100,
        workers: 2,
        // A job that reports its consumed bytes puts them on its iterations.
        iterations: [
          {
            i: 0,
            t: 0,
            waitMs: 0,
            computeMs: 1,
            samples: totalSamples,
            ...(spec.consumedBytes !== undefined ? { bytes: spec.consumedBytes } : {}),
          },
        ],
        summary: s,
      },
    ],
    paceRank: 0,
    summary: s,
    resources: [],
    jobCpuSecPerSample: spec.jobCpuSecPerSample ?? null,
    storageReadBytesPerSec: spec.storageReadBytesPerSec ?? null,
    badEventLines: 0,
    logs: { stdout: 'out.log', stderr: 'err.log' },
    cpus: null,
  };
}

/** The three modes at the given per-iteration times (ms), half-width 1 ms each. */
export function three(syn: number, cached: number, cold: number, hw: number | null = 1) {
  return {
    synthetic: modeResult('synthetic', { iterMs: syn, halfWidth: hw }),
    cached: modeResult('cached', { iterMs: cached, halfWidth: hw, computeMs: Math.min(syn, cached) }),
    cold: modeResult('cold', { iterMs: cold, halfWidth: hw, computeMs: Math.min(syn, cold) }),
  };
}
