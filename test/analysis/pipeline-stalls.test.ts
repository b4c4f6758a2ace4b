import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../src/analysis/split.js';
import { summarizeIterations } from '../../src/analysis/summarize.js';
import { markWarmup } from '../../src/analysis/warmup.js';
import { checkFreqInterval } from '../../src/analysis/checkpoint-stall.js';
import {
  AnalysisSchema,
  type CheckpointRecord,
  type EpochRecord,
  type Iteration,
  type ModeResult,
} from '../../src/schema/profile.js';
import type { Mode } from '../../src/schema/events.js';
import { mulberry32 } from '../../src/random.js';
import { modeResult } from './modes.js';

/** What a job does besides steady training: saves inside steps, saves between epochs, epoch starts. */
interface JobShape {
  stepMs: number;
  waitMs: number;
  /** Save every k iterations inside the step, blocking saveMs; 0: never. */
  saveEvery?: number;
  saveMs?: number;
  /** Save at each epoch's end, outside the steps, blocking endSaveMs; 0: never. */
  endSaveMs?: number;
  /** Iterations per epoch; the epoch's start costs createMs in iter(loader) and firstExtraMs more wait. */
  epochIterations?: number;
  createMs?: number;
  firstExtraMs?: number;
  persistent?: boolean;
  iterations?: number;
  seed?: number;
}

/** A mode whose iterations, saves and epoch starts come from `shape`, summarised by the real code. */
function shapedMode(mode: Mode, shape: JobShape): ModeResult {
  const random = mulberry32(shape.seed ?? 1);
  const n = shape.iterations ?? 600;
  const iterations: Iteration[] = [];
  const checkpoints: CheckpointRecord[] = [];
  const epochs: EpochRecord[] = [];
  const epochLen = shape.epochIterations ?? Infinity;
  for (let i = 0; i < n; i++) {
    const jitter = () => 1 + (random() - 0.5) * 0.04;
    const epochStart = i % epochLen === 0;
    let waitMs = shape.waitMs * jitter();
    let computeMs = shape.stepMs * jitter();
    if (epochStart) {
      const epoch = Math.floor(i / epochLen);
      waitMs += shape.firstExtraMs ?? 0;
      epochs.push({
        t: i,
        epoch: Number.isFinite(epoch) ? epoch : 0,
        i,
        createMs: shape.createMs ?? 0,
        firstWaitMs: waitMs,
        ...(epoch > 0 ? { gapMs: 1 } : {}),
        epochIterations: Number.isFinite(epochLen) ? epochLen : null,
        workers: 4,
        persistentWorkers: shape.persistent ?? false,
      });
    }
    if (shape.saveEvery && (i + 1) % shape.saveEvery === 0) {
      const blockingMs = (shape.saveMs ?? 0) * jitter();
      computeMs += blockingMs;
      checkpoints.push({
        t: i,
        i,
        inStep: true,
        api: 'torch.save',
        blockingMs,
        syncMs: 0,
        bytes: 128e6,
        persisted: mode !== 'synthetic',
      });
    }
    if (shape.endSaveMs && (i + 1) % epochLen === 0) {
      checkpoints.push({
        t: i,
        i: i + 1,
        inStep: false,
        api: 'torch.save',
        blockingMs: shape.endSaveMs * jitter(),
        syncMs: 0,
        bytes: 64e6,
        persisted: mode !== 'synthetic',
      });
    }
    iterations.push({ i, t: i, waitMs, computeMs, samples: 32 });
  }
  const summary = summarizeIterations(iterations, { workers: 4 })!;
  const base = modeResult(mode, { iterMs: summary.iterMs.mean });
  return {
    ...base,
    summary,
    ranks: [
      {
        ...base.ranks[0],
        workers: 4,
        iterations: markWarmup(iterations, summary.warmupIterations),
        summary,
        ...(checkpoints.length ? { checkpoints } : {}),
        ...(epochs.length ? { epochs } : {}),
      },
    ],
  };
}

function threeShaped(shape: JobShape, prepWaitMs: number, fetchWaitMs: number) {
  return {
    synthetic: shapedMode('synthetic', { ...shape, waitMs: 0.1, firstExtraMs: 0, createMs: 0.1 }),
    cached: shapedMode('cached', { ...shape, waitMs: prepWaitMs, seed: 2 }),
    cold: shapedMode('cold', { ...shape, waitMs: prepWaitMs + fetchWaitMs, seed: 3 }),
  };
}

const near = (actual: number | null | undefined, expected: number, tol: number, what: string) =>
  assert.ok(actual != null && Math.abs(actual - expected) <= tol, `${what}: ${actual} vs ${expected} ± ${tol}`);

test('a save every 5 iterations inside the step is the checkpoint stall, not compute; the verdict names it', () => {
  const a = analyze(threeShaped({ stepMs: 100, waitMs: 0, saveEvery: 5, saveMs: 150 }, 0.1, 0.1));
  AnalysisSchema.parse(a);
  near(a.checkpointStall?.ms.mean, 30, 1.5, 'checkpoint ms per iteration');
  near(a.checkpointStall?.intervalIterations, 5, 0, 'interval');
  assert.equal(a.checkpointStall?.intervalSource, 'saves');
  assert.equal(a.checkpointStall?.mode, 'cold');
  near(a.computeMs?.mean, 100, 2, 'compute without the saves');
  near(a.iterMs?.mean, 130, 3, 'the real pace keeps the saves');
  near(a.prepStallMs?.mean, 0, 1, 'prep stall');
  assert.equal(a.verdict.bound, 'checkpoint');
  assert.match(a.verdict.text, /checkpoint-bound: 23% of each iteration/);
  assert.match(a.advice, /Save every 43 iterations instead of every 5/);
  assert.equal(a.checkpointStall?.syntheticSaves?.scratch, 120);
});

test('without saves or epoch starts the split is unchanged', () => {
  const a = analyze(threeShaped({ stepMs: 100, waitMs: 0 }, 20, 50));
  assert.equal(a.checkpointStall, null);
  assert.equal(a.boundaryStall, null);
  near(a.prepStallMs?.mean, 20, 1.5, 'prep');
  near(a.fetchStallMs?.mean, 50, 2, 'fetch');
  near(a.iterMs?.mean, 170, 3, 'pace');
});

test('saves at each epoch end are amortised over the epoch; restarting workers are the boundary stall', () => {
  const shape = {
    stepMs: 50,
    waitMs: 0,
    epochIterations: 40,
    endSaveMs: 400,
    createMs: 300,
    firstExtraMs: 500,
    persistent: false,
  };
  const a = analyze(threeShaped(shape, 0.1, 0.1));
  AnalysisSchema.parse(a);
  near(a.checkpointStall?.ms.mean, 10, 0.5, 'checkpoint ms per iteration');
  assert.equal(a.checkpointStall?.intervalSource, 'epoch');
  near(a.boundaryStall?.perEpochMs.mean, 800, 20, 'per epoch');
  near(a.boundaryStall?.ms.mean, 20, 0.5, 'boundary ms per iteration');
  assert.equal(a.boundaryStall?.basis, 'later-epochs');
  assert.equal(a.boundaryStall?.repeats, true);
  near(a.boundaryStall?.firstBatchMs, 800, 20, 'first batch');
  // The first waits beyond a steady one are taken out of the prep stall: counted once, as the boundary's.
  near(a.prepStallMs?.mean, 0, 1, 'prep stall');
  near(a.iterMs?.mean, 80, 2, 'the real pace');
  assert.equal(a.verdict.bound, 'boundary');
  assert.match(a.advice, /persistent_workers=True/);
});

test('persistent workers: a small refill at each epoch start is within the compute-bound verdict', () => {
  const shape = { stepMs: 50, waitMs: 0, epochIterations: 100, createMs: 1, firstExtraMs: 60, persistent: true };
  const a = analyze(threeShaped(shape, 0.1, 0.1));
  near(a.boundaryStall?.ms.mean, 0.61, 0.05, 'boundary ms per iteration');
  assert.equal(a.verdict.bound, 'compute');
});

test('CheckFreq interval: the fewest iterations that keep the saves under the budget', () => {
  assert.equal(checkFreqInterval(150, 100), 43);
  assert.equal(checkFreqInterval(150, 100, 0.1), 15);
  assert.equal(checkFreqInterval(1, 100), 1);
  assert.equal(checkFreqInterval(1, 0), Infinity);
});

test('a named boundary stall is the verdict even when the noise leaves room for a data stall', () => {
  const shape = { stepMs: 50, waitMs: 0, epochIterations: 20, createMs: 20, firstExtraMs: 400, persistent: false };
  const modes = threeShaped(shape, 0.1, 0.1);
  // A cold run whose wait is noisy: its interval leaves room for a fetch stall but names none.
  modes.cold.summary = {
    ...modes.cold.summary!,
    waitMs: { ...modes.cold.summary!.waitMs, halfWidth: 15 },
    iterMs: { ...modes.cold.summary!.iterMs, halfWidth: 15 },
  };
  const a = analyze(modes);
  assert.equal(a.boundaryStall?.call, 'stall');
  assert.equal(a.verdict.bound, 'boundary', a.verdict.text);
});
