/**
 * The checkpoint stall (CheckFreq, Mohan et al., FAST'21): the time the training loop is blocked by saves, amortised
 * over the iterations between them. Measured from the saves the job reported (the Python hook times torch.save,
 * torch.distributed.checkpoint, Lightning's and Hugging Face's saves), in the mode that ran the real pace.
 */
import type { CheckpointRecord, CheckpointStall, ModeResult, RankResult } from '../schema/profile.js';
import { laterEpochs, savingRankOf } from './step-events.js';
import { estimateOf } from './estimate.js';
import { mean, median } from './stats.js';

/** CheckFreq's default budget: checkpointing may cost at most this share of the training time. */
export const CHECKFREQ_OVERHEAD_BUDGET = 0.035;

/** The modes, in the order their saves are preferred: the real pace first. */
const PREFERRED = ['cold', 'cached', 'synthetic'] as const;

/** The iterations between saves of one kind, and where that figure came from. */
interface Interval {
  iterations: number;
  source: 'saves' | 'epoch' | 'run';
}

/**
 * Iterations between saves made inside steps: the median gap between consecutive ones (a gap across two pooled runs is
 * an outlier the median ignores); one save a run: the iterations the run made per save.
 */
function inStepInterval(saves: readonly CheckpointRecord[], rank: RankResult): Interval | null {
  const gaps: number[] = [];
  for (let k = 1; k < saves.length; k++) if (saves[k].i > saves[k - 1].i) gaps.push(saves[k].i - saves[k - 1].i);
  if (gaps.length > 0) return { iterations: median(gaps), source: 'saves' };
  return saves.length > 0 && rank.iterations.length > 0
    ? { iterations: rank.iterations.length / saves.length, source: 'run' }
    : null;
}

/**
 * Iterations between saves made outside steps (at an epoch's end): the epoch's length times the epochs per such save;
 * without a length, the iterations the run made per save.
 */
function betweenEpochsInterval(saves: readonly CheckpointRecord[], rank: RankResult): Interval | null {
  if (saves.length === 0) return null;
  const epochIterations = (rank.epochs ?? []).find((e) => e.epochIterations)?.epochIterations ?? null;
  const boundaries = laterEpochs(rank).length;
  if (epochIterations !== null && boundaries > 0)
    return { iterations: (epochIterations * Math.max(boundaries, saves.length)) / saves.length, source: 'epoch' };
  return rank.iterations.length > 0 ? { iterations: rank.iterations.length / saves.length, source: 'run' } : null;
}

/** The checkpoint stall of a profile's modes, or null when no mode reported a save. */
export function checkpointStall(
  modes: Partial<Record<(typeof PREFERRED)[number], ModeResult>>,
): Omit<CheckpointStall, 'fraction' | 'call' | 'text'> | null {
  for (const name of PREFERRED) {
    const mode = modes[name];
    const rank = mode && savingRankOf(mode);
    if (!mode || !rank) continue;
    const saves = rank.checkpoints!;
    const inStep = saves.filter((c) => c.inStep);
    const between = saves.filter((c) => !c.inStep);
    // What one save costs, from the modes that train on real batches (the cached and the cold: to scratch files unless
    // --keep-outputs, then to the script's own targets); the synthetic mode's saves always go to scratch files, new
    // files that cost less than overwriting a target (ext4 flushes a truncated file's new data on close), and are used
    // only where nothing else saved.
    const costly = realSaves(modes, name === 'synthetic');
    // Each kind of save (inside steps, between epochs) at its own cost over its own interval.
    const intervals = [
      { saves: inStep, costs: costly.inStep, interval: inStepInterval(inStep, rank) },
      { saves: between, costs: costly.between, interval: betweenEpochsInterval(between, rank) },
    ].filter((g) => g.saves.length > 0 && g.interval !== null);
    if (intervals.length === 0) continue;
    const perIterationMs = intervals.reduce(
      (sum, g) =>
        sum + mean((g.costs.length > 0 ? g.costs : g.saves).map((c) => c.blockingMs)) / g.interval!.iterations,
      0,
    );
    const savesPerIteration = intervals.reduce((sum, g) => sum + 1 / g.interval!.iterations, 0);
    const perSave = estimateOf(
      costly.all.map((c) => c.blockingMs),
      mode.state.proven,
    );
    const bytes = costly.all.every((c) => c.bytes !== null) ? mean(costly.all.map((c) => c.bytes!)) : null;
    const synced = costly.all.filter((c) => c.syncMs > 0);
    const asyncWrites = costly.all.filter((c) => c.writeMs !== undefined && c.writeMs !== null).map((c) => c.writeMs!);
    const scratch = saves.filter((c) => !c.persisted).length;
    return {
      ms: {
        mean: perIterationMs,
        halfWidth: perSave.halfWidth === null ? null : perSave.halfWidth * savesPerIteration,
        proven: mode.state.proven,
      },
      mode: name,
      saves: costly.all.length,
      inStepSaves: costly.inStep.length,
      perSaveMs: perSave,
      syncMsPerSave: mean(costly.all.map((c) => c.syncMs)),
      asyncWriteMs: asyncWrites.length > 0 ? mean(asyncWrites) : null,
      bytesPerSave: bytes,
      intervalIterations: 1 / savesPerIteration,
      intervalSource:
        intervals.length === 1
          ? intervals[0].interval!.source
          : intervals.some((g) => g.interval!.source === 'run')
            ? 'run'
            : 'saves',
      writeBytesPerSec: bytes !== null && perSave.mean > 0 ? bytes / (perSave.mean / 1000) : null,
      syncedBytesPerSec: syncedRate(synced),
      apis: [...new Set(costly.all.map((c) => c.api))],
      modes: costly.modes,
      syntheticSaves:
        name === 'synthetic' ? { scratch, persisted: saves.length - scratch } : syntheticSavesOf(modes.synthetic),
      unseenWriteBytesPerIter: unseenWriteBytesPerIteration(mode, rank),
    };
  }
  return null;
}

/**
 * The saves of the modes that train on real batches (the cached and cold modes' savers), or the synthetic mode's when
 * it alone saved.
 */
function realSaves(modes: Partial<Record<(typeof PREFERRED)[number], ModeResult>>, syntheticOnly: boolean) {
  const names = syntheticOnly ? (['synthetic'] as const) : (['cold', 'cached'] as const);
  const used = names.flatMap((name) => {
    const rank = modes[name] && savingRankOf(modes[name]!);
    return rank ? [{ name, saves: rank.checkpoints! }] : [];
  });
  const all = used.flatMap((u) => u.saves);
  return {
    all,
    inStep: all.filter((c) => c.inStep),
    between: all.filter((c) => !c.inStep),
    modes: used.map((u) => u.name),
  };
}

/** Bytes over fsync time of the saves that synced and said their size: the storage's own write rate. */
function syncedRate(synced: readonly CheckpointRecord[]): number | null {
  const known = synced.filter((c) => c.bytes !== null);
  const syncSec = known.reduce((sum, c) => sum + c.syncMs, 0) / 1000;
  return known.length > 0 && syncSec > 0 ? known.reduce((sum, c) => sum + c.bytes!, 0) / syncSec : null;
}

/** How the synthetic mode's saves were kept off the user's files. */
function syntheticSavesOf(synthetic: ModeResult | undefined): CheckpointStall['syntheticSaves'] {
  const saves = synthetic?.ranks.flatMap((r) => r.checkpoints ?? []) ?? [];
  if (saves.length === 0) return null;
  const scratch = saves.filter((c) => !c.persisted).length;
  return { scratch, persisted: saves.length - scratch };
}

/**
 * Bytes the job's tree sent to storage per iteration beyond its saves' own (write_bytes over the run, less the bytes
 * the hook saw saved): what a writer the hook cannot see wrote (a copy of the checkpoint, logs, a writer of its own).
 * Null without write_bytes readings.
 */
export function unseenWriteBytesPerIteration(mode: ModeResult, saver: RankResult | null): number | null {
  const written = treeWriteBytes(mode);
  const iterations = Math.max(...mode.ranks.map((r) => r.iterations.length), 0);
  if (written === null || iterations === 0) return null;
  // Every save the hook saw wrote its bytes, a synthetic-mode scratch file too (write_bytes counts pages as they are
  // dirtied).
  const saved = (saver?.checkpoints ?? []).reduce((sum, c) => sum + (c.bytes ?? 0), 0);
  return Math.max(0, written - saved) / iterations;
}

/**
 * Bytes the job's tree wrote over its runs (/proc/PID/io write_bytes), or null when not sampled. The counter is
 * cumulative within a run; pooled runs' samples follow each other, and a fall is the next run starting from 0.
 */
function treeWriteBytes(mode: ModeResult): number | null {
  const readings = mode.resources.filter((s) => s.jobWriteBytes !== undefined).map((s) => s.jobWriteBytes!);
  if (readings.length === 0) return null;
  let total = readings[0];
  for (let k = 1; k < readings.length; k++)
    total += readings[k] >= readings[k - 1] ? readings[k] - readings[k - 1] : readings[k];
  return total;
}

/**
 * CheckFreq's rule for the checkpoint interval: the fewest iterations between saves that keep their cost under `budget`
 * of the training time, for a save that blocks `perSaveMs` and an iteration of `iterMs` without saves.
 */
export function checkFreqInterval(perSaveMs: number, iterMs: number, budget = CHECKFREQ_OVERHEAD_BUDGET): number {
  if (!(iterMs > 0) || !(budget > 0)) return Infinity;
  return Math.max(1, Math.ceil(perSaveMs / (budget * iterMs)));
}
