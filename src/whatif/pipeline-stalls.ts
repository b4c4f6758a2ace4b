/**
 * What-if for the checkpoint and epoch-boundary stalls (CheckFreq, Mohan et al., FAST'21): the steady model predicts
 * the training pace; the saves and the epoch starts are added on top, each at the asked interval, write bandwidth, save
 * mode and loader settings. Pure. One save's blocking time, by save mode: docs/whatif.md, "Checkpoints and epoch
 * boundaries".
 */
import { checkFreqInterval, checkpointStall, CHECKFREQ_OVERHEAD_BUDGET } from '../analysis/checkpoint-stall.js';
import { boundaryStall } from '../analysis/boundary-stall.js';
import type { Profile } from '../schema/profile.js';
import type { PipelineWhatif } from '../schema/whatif-output.js';
import { PIPELINE_TEXT } from './pipeline-text.js';

/** The checkpoint and loader settings a what-if may change. */
export interface PipelineQuery {
  /** Iterations between saves (--checkpoint-every). */
  checkpointEvery?: number;
  /** Bytes/s a save writes at (--write-bw). */
  writeBytesPerSec?: number;
  /** 'async': saves staged, written in the background (--async-save); 'sync': blocking saves (--sync-save). */
  saveMode?: 'sync' | 'async';
  /** Checkpointing's share of the training time to keep under (default CheckFreq's 3.5%). */
  overheadBudget?: number;
  /** Failures a day the user expects (--failures-per-day), for the work lost per failure. */
  failuresPerDay?: number;
  /** DataLoader persistent_workers (--persistent-workers). */
  persistentWorkers?: boolean;
  /** DataLoader prefetch_factor (--prefetch-factor). */
  prefetchFactor?: number;
}

/** The steady model's per-iteration time and rate, baseline and asked. */
export interface SteadyPace {
  iterMs: number;
  samplesPerSec: number;
}

/**
 * The stalls as profiled and as asked, on top of the steady model's baseline and asked paces; null when the profile saw
 * neither a save nor an epoch start.
 */
export function pipelineWhatif(
  profile: Profile,
  query: PipelineQuery,
  baseline: SteadyPace,
  asked: SteadyPace,
): PipelineWhatif | null {
  const checkpoint = checkpointWhatif(profile, query, asked.iterMs);
  const boundary = boundaryWhatif(profile, query);
  if (checkpoint === null && boundary === null) return null;
  const add = (pace: SteadyPace, extraMs: number) => ({
    iterMs: pace.iterMs + extraMs,
    samplesPerSec: pace.iterMs + extraMs > 0 ? (pace.samplesPerSec * pace.iterMs) / (pace.iterMs + extraMs) : 0,
  });
  return {
    checkpoint,
    boundary,
    baseline: add(baseline, (checkpoint?.profiled.stallMsPerIter ?? 0) + (boundary?.profiled.stallMsPerIter ?? 0)),
    prediction: add(asked, (checkpoint?.asked.stallMsPerIter ?? 0) + (boundary?.asked.stallMsPerIter ?? 0)),
  };
}

type CheckpointAnswer = NonNullable<PipelineWhatif['checkpoint']>;

function checkpointWhatif(profile: Profile, query: PipelineQuery, askedIterMs: number): CheckpointAnswer | null {
  const measured = checkpointStall(profile.modes);
  if (measured === null || measured.intervalIterations === null) return null;
  const assumptions: string[] = [];
  const profiledMode = measured.asyncWriteMs !== null ? 'async' : 'sync';
  const saveMode = query.saveMode ?? profiledMode;
  const every = query.checkpointEvery ?? measured.intervalIterations;
  const bytes = measured.bytesPerSave;
  const perSaveMeasured = measured.perSaveMs.mean;
  const syncMs = measured.syncMsPerSave;
  const synced = syncMs > 0;
  const bandwidth = query.writeBytesPerSec ?? null;
  if (bandwidth !== null && bytes === null) assumptions.push(PIPELINE_TEXT.bytesUnknown);
  // A script that saves at each epoch's end has no interval to set: another one is a change to the script.
  if (query.checkpointEvery !== undefined && measured.intervalSource === 'epoch')
    assumptions.push(PIPELINE_TEXT.savesPerEpoch(measured.intervalIterations));
  // Writing one save at the asked bandwidth, or as measured.
  const writeMs = bandwidth !== null && bytes !== null ? (bytes / bandwidth) * 1000 : null;
  const serialiseMs = Math.max(0, perSaveMeasured - syncMs);

  const perSave = (k: number): number => {
    const intervalMs = k * askedIterMs;
    if (saveMode === 'async') {
      // Staging: as measured for an async save; for a blocking one, its part that was not syncing.
      const staging = profiledMode === 'async' ? perSaveMeasured : serialiseMs;
      const background = writeMs ?? measured.asyncWriteMs ?? (synced ? syncMs : 0);
      return staging + Math.max(0, background - intervalMs);
    }
    if (profiledMode === 'async') {
      // A blocking save of what was saved in the background: staging and the whole write in the loop.
      return perSaveMeasured + (writeMs ?? measured.asyncWriteMs ?? 0);
    }
    if (synced) return serialiseMs + (writeMs ?? syncMs);
    return perSaveMeasured + (writeMs === null ? 0 : Math.max(0, writeMs - intervalMs));
  };

  if (saveMode === 'async' && profiledMode === 'sync') assumptions.push(PIPELINE_TEXT.stagingAssumed(serialiseMs));
  if (saveMode === 'sync' && !synced && profiledMode === 'sync') assumptions.push(PIPELINE_TEXT.bufferedSaves);
  if (bandwidth === null && saveMode !== profiledMode && measured.asyncWriteMs === null && !synced)
    assumptions.push(PIPELINE_TEXT.writeUnmeasured);

  const askedPerSave = perSave(every);
  const stallMsPerIter = askedPerSave / every;
  const budget = query.overheadBudget ?? CHECKFREQ_OVERHEAD_BUDGET;
  const everyForBudget = fewestIterationsWithin(budget, askedIterMs, perSave);
  const lostWorkPerFailureSec = (every * (askedIterMs + stallMsPerIter)) / 2 / 1000;
  return {
    profiled: {
      saveMode: profiledMode,
      everyIterations: measured.intervalIterations,
      perSaveMs: perSaveMeasured,
      stallMsPerIter: measured.ms.mean,
      synced,
    },
    asked: {
      saveMode,
      everyIterations: every,
      perSaveMs: askedPerSave,
      stallMsPerIter,
      overhead: stallMsPerIter / (askedIterMs + stallMsPerIter),
      writeBytesPerSec: bandwidth,
    },
    budget,
    everyForBudget,
    lostWorkPerFailureSec,
    failures:
      query.failuresPerDay !== undefined ? failureCost(query.failuresPerDay, askedIterMs, every, perSave) : null,
    // The overhead and the budget's interval are shares of the asked pace.
    assumptions: askedIterMs > 0 ? assumptions : [...assumptions, PIPELINE_TEXT.noPace],
  };
}

/**
 * The fewest iterations between saves whose cost stays under `budget`: the save time over the interval's training time.
 * The save may itself depend on the interval (writeback or a background write that the interval covers), so the first k
 * of CheckFreq's rule is checked and raised until it holds.
 */
function fewestIterationsWithin(budget: number, iterMs: number, perSave: (k: number) => number): number | null {
  if (!(iterMs > 0)) return null;
  let k = checkFreqInterval(perSave(Infinity), iterMs, budget);
  for (let tries = 0; tries < 64 && Number.isFinite(k); tries++) {
    if (perSave(k) <= budget * k * iterMs) return k;
    k = Math.max(k + 1, Math.ceil(perSave(k) / (budget * iterMs)));
  }
  return null;
}

/**
 * With F failures a day: the share of time lost to work redone (half an interval a failure) and the total with the
 * saves' own cost, and Young's interval sqrt(2 C M) that makes the sum least (C one save, M the time between failures),
 * in iterations.
 */
function failureCost(
  perDay: number,
  iterMs: number,
  every: number,
  perSave: (k: number) => number,
): NonNullable<CheckpointAnswer['failures']> {
  const dayMs = 86_400_000;
  const intervalMs = every * iterMs + perSave(every);
  const lostShare = Math.min(1, (perDay * intervalMs) / 2 / dayMs);
  const saveShare = perSave(every) / intervalMs;
  const mtbfMs = perDay > 0 ? dayMs / perDay : Infinity;
  const youngMs = Math.sqrt(2 * perSave(every) * mtbfMs);
  return {
    perDay,
    lostShare,
    totalShare: Math.min(1, lostShare + saveShare),
    bestEveryIterations: iterMs > 0 && Number.isFinite(youngMs) ? Math.max(1, Math.round(youngMs / iterMs)) : every,
  };
}

type BoundaryAnswer = NonNullable<PipelineWhatif['boundary']>;

/**
 * Epoch starts with other loader settings. Persistent workers start once: an epoch's start is then the refill of an
 * empty pipeline, one batch prepared by one worker (the batch's samples times the prep CPU per sample), at most the
 * first wait measured. prefetch_factor deepens the queue of steady state; the first batch of an epoch waits for its
 * full preparation anyway.
 */
function boundaryWhatif(profile: Profile, query: PipelineQuery): BoundaryAnswer | null {
  const measured = boundaryStall(profile.modes);
  if (measured === null || measured.epochIterations === null) return null;
  const assumptions: string[] = [];
  const rank = profile.modes[measured.mode]?.ranks.find((r) => r.loader !== undefined);
  const prefetch = rank?.loader?.prefetchFactor ?? null;
  const persistent = measured.persistentWorkers;
  const askedPersistent = query.persistentWorkers ?? persistent;
  let perEpochMs = measured.perEpochMs.mean;
  if (askedPersistent === true && persistent === false) {
    const u = profile.analysis?.prepCpuSecPerSample ?? null;
    const samples = profile.modes[measured.mode]?.summary?.samplesPerIter ?? null;
    const refillMs = u !== null && samples !== null ? samples * u * 1000 : null;
    perEpochMs = refillMs === null ? measured.firstWaitExcessMs : Math.min(measured.firstWaitExcessMs, refillMs);
    assumptions.push(refillMs === null ? PIPELINE_TEXT.refillUpperBound : PIPELINE_TEXT.refill(refillMs));
  } else if (askedPersistent === false && persistent === true) {
    assumptions.push(PIPELINE_TEXT.restartUnmeasured);
  }
  if (query.prefetchFactor !== undefined && query.prefetchFactor !== prefetch)
    assumptions.push(PIPELINE_TEXT.prefetchNoEffect);
  const askedPrefetch = query.prefetchFactor ?? prefetch;
  return {
    profiled: {
      perEpochMs: measured.perEpochMs.mean,
      stallMsPerIter: measured.ms.mean,
      persistentWorkers: persistent,
      prefetchFactor: prefetch,
    },
    asked: {
      perEpochMs,
      stallMsPerIter: perEpochMs / measured.epochIterations,
      persistentWorkers: askedPersistent,
      prefetchFactor: askedPrefetch,
    },
    line: loaderLine(
      askedPersistent !== persistent ? askedPersistent : null,
      askedPrefetch !== prefetch ? askedPrefetch : null,
      rank?.loader?.framework,
    ),
    assumptions,
  };
}

/** The line to paste for the changed loader settings, in the framework's own words where it has them. */
function loaderLine(persistent: boolean | null, prefetch: number | null, framework: string | undefined): string | null {
  const args = [
    persistent !== null
      ? `${framework === 'hf-trainer' ? 'dataloader_persistent_workers' : 'persistent_workers'}=${persistent ? 'True' : 'False'}`
      : null,
    prefetch !== null
      ? `${framework === 'hf-trainer' ? 'dataloader_prefetch_factor' : 'prefetch_factor'}=${prefetch}`
      : null,
  ].filter((a): a is string => a !== null);
  if (args.length === 0) return null;
  return framework === 'hf-trainer'
    ? `TrainingArguments(..., ${args.join(', ')})`
    : `DataLoader(..., ${args.join(', ')})`;
}
