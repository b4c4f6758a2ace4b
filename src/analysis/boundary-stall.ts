/**
 * The epoch-boundary stall: at each epoch's start the training loop waits for iter(loader) (a DataLoader without
 * persistent_workers forks its workers again; the sampler starts over) and then for a first batch from an empty
 * pipeline. Measured from the epoch starts the job reported, amortised over the epoch's iterations.
 */
import type { BoundaryStall, EpochRecord, ModeResult, RankResult } from '../schema/profile.js';
import { estimateOf } from './estimate.js';
import { firstWaitExcessMs, laterEpochs, paceRankOf, steadyWaitMs } from './step-events.js';
import { mean, median } from './stats.js';

/** A later epoch repeats the stall when it pays at least this share of the mean. */
const REPEAT_SHARE = 0.5;

/** The boundary stall, from the cold mode where it ran, else the cached; null when neither reported an epoch start. */
export function boundaryStall(modes: {
  cached?: ModeResult;
  cold?: ModeResult;
}): Omit<BoundaryStall, 'fraction' | 'call' | 'text'> | null {
  for (const name of ['cold', 'cached'] as const) {
    const mode = modes[name];
    const rank = mode && paceRankOf(mode);
    if (!mode || !rank?.epochs?.length) continue;
    const measured = ofRank(rank, mode.state.proven);
    if (measured) return { ...measured, mode: name };
  }
  return null;
}

function ofRank(rank: RankResult, proven: boolean): Omit<BoundaryStall, 'fraction' | 'call' | 'text' | 'mode'> | null {
  const steady = steadyWaitMs(rank) ?? 0;
  const epochs = rank.epochs!;
  const first = epochs.find((e) => e.epoch === 0) ?? null;
  const later = laterEpochs(rank);
  const persistent =
    epochs.find((e) => e.persistentWorkers !== undefined)?.persistentWorkers ?? rank.loader?.persistentWorkers ?? null;
  // No later epoch ran: the first epoch's start stands for the later ones only when workers start again each epoch; it
  // also holds one-time costs (the workers' first imports), so it is an upper bound.
  const basis: EpochRecord[] = later.length > 0 ? later : first && persistent !== true ? [first] : [];
  if (basis.length === 0) return null;
  const perEpoch = basis.map((e) => e.createMs + firstWaitExcessMs(e, steady));
  const gaps = later.flatMap((e) => (e.gapMs !== undefined ? [e.gapMs] : []));
  const perEpochMs = estimateOf(perEpoch, proven);
  const epochIterations = epochs.find((e) => e.epochIterations)?.epochIterations ?? gapBetweenStarts(epochs);
  if (epochIterations === null) return null;
  return {
    ms: {
      mean: perEpochMs.mean / epochIterations,
      halfWidth: perEpochMs.halfWidth === null ? null : perEpochMs.halfWidth / epochIterations,
      proven,
    },
    perEpochMs,
    createMs: mean(basis.map((e) => e.createMs)),
    firstWaitExcessMs: mean(basis.map((e) => firstWaitExcessMs(e, steady))),
    steadyWaitMs: steady,
    basis: later.length > 0 ? 'later-epochs' : 'first-epoch',
    epochs: basis.length,
    epochIterations,
    workers: epochs.find((e) => e.workers !== undefined)?.workers ?? rank.workers,
    persistentWorkers: persistent,
    repeats: later.length >= 2 ? perEpoch.every((ms) => ms >= REPEAT_SHARE * perEpochMs.mean) : null,
    firstBatchMs: first ? first.createMs + first.firstWaitMs : null,
    gapMs: gaps.length > 0 ? mean(gaps) : null,
  };
}

/** Iterations between epoch starts when the loader has no length (an IterableDataset); null with one start. */
function gapBetweenStarts(epochs: readonly EpochRecord[]): number | null {
  const gaps: number[] = [];
  for (let k = 1; k < epochs.length; k++) if (epochs[k].i > epochs[k - 1].i) gaps.push(epochs[k].i - epochs[k - 1].i);
  return gaps.length > 0 ? median(gaps) : null;
}
