/**
 * A block of one launch too short for a summary (no measured window) is judged over its own iterations after those
 * carried in, never on the launch's whole-run bytes, which are every block's: the imports, the next block's cold
 * reads. A cached block of --continue read "1900% of consumed bytes from storage" that way and left its mode unproven
 * (stop 49). Where no reading covers even those iterations, its reads are unmeasured, and it says why.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blockResult, type BlockEvidence, type BlockSlice } from '../../src/profile/block-result.js';
import type { ModeRunInput } from '../../src/profile/run-mode.js';
import type { Iteration } from '../../src/schema/profile.js';

const T0 = 1_700_000_000_000;
const FILE_BYTES = 100_000;
const FILES = 200;

/** `n` iterations of 4 samples, 50 ms apart from `at`, each batch's bytes reported. */
function iterationsFrom(at: number, n: number): Iteration[] {
  return Array.from({ length: n }, (_, k) => ({
    i: k,
    t: at + 50 * (k + 1),
    waitMs: 1,
    computeMs: 49,
    samples: 4,
    bytes: 4 * FILE_BYTES,
  }));
}

/** A cached block, the second of its launch, that ran 5 iterations (too few for a summary) from T0 + 1 s. */
function shortCachedBlock(series: { t: number; bytes: number }[]): BlockEvidence {
  const iterations = iterationsFrom(T0 + 1000, 5);
  const slice: BlockSlice = {
    file: 'events/rank0.jsonl',
    start: null,
    entered: true,
    acknowledged: true,
    startI: 0,
    iterations,
    carried: 1,
    measured: iterations.slice(1),
    epochs: [],
    checkpoints: [],
    workers: 2,
    badLines: 0,
    end: null,
  };
  return {
    span: {
      index: 1,
      mode: 'cached',
      previousMode: 'synthetic',
      startedAt: T0 + 1000,
      endedAt: T0 + 1300,
      lastI: new Map([[slice.file, 4]]),
      launchStartedAt: T0,
      sole: false,
    },
    slices: [slice],
    processes: [],
    resources: [],
    fetched: {
      series,
      seriesSource: 'read_bytes of the job tree (sampled)',
      // The whole launch: the imports and the next block's cold reads, 19x what this block consumed.
      wholeRunBytes: 19 * 16 * FILE_BYTES,
      wholeRunSource: 'read_bytes of the job tree over the whole run',
      otherReads: () => null,
    },
    prepared: { residentBytesBefore: FILES * FILE_BYTES, finish: async () => ({}) },
    cacheFinish: {},
    profilerCpuSec: 0,
    profilerCpu: {},
    logs: { stdout: 'stdout.log', stderr: 'stderr.log' },
    ending: { exit: null, stopReason: 'precision', noIterations: false, hang: null },
    launchExit: { exitCode: 0, signal: null, stopRequested: true, timedOut: false },
    subsetApplied: false,
    minIterations: 50,
  } as BlockEvidence;
}

const input = {
  dataset: {
    root: '/data',
    files: [],
    bytes: FILES * FILE_BYTES,
    fileCount: FILES,
    meanFileBytes: FILE_BYTES,
    fitsInMemory: true,
    source: { kind: 'files', fetchesFrom: 'storage', roots: ['/data'], dropCaches: false },
  },
  dataSource: { proofLimit: () => null },
  pollMs: 250,
  interrupted: () => false,
  timeoutSec: 60,
} as unknown as Pick<ModeRunInput, 'dataset' | 'dataSource' | 'pollMs' | 'numWorkers' | 'interrupted' | 'timeoutSec'>;

test('a short block among others is judged over its own iterations after the carried ones, not the launch', () => {
  // Readings every 100 ms through the block: nothing read from storage while it ran.
  const series = Array.from({ length: 6 }, (_, k) => ({ t: T0 + 950 + 100 * k, bytes: 5_000_000 }));
  const result = blockResult(input, shortCachedBlock(series));
  assert.equal(result.summary, null, 'too short for a summary');
  assert.equal(result.state.readBytes, 0, result.state.reason);
  assert.ok(result.state.proven, result.state.reason);
  assert.doesNotMatch(result.state.reason, /1900%/);
});

test('a short block among others that no reading covers: its reads are unmeasured, never the launch', () => {
  const series = [
    { t: T0, bytes: 0 },
    { t: T0 + 5000, bytes: 19 * 16 * FILE_BYTES },
  ];
  const result = blockResult(input, shortCachedBlock(series));
  assert.equal(result.state.readBytes, null);
  assert.equal(result.state.proven, false);
  assert.doesNotMatch(result.state.reason, /1900%/);
});
