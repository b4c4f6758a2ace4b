/**
 * One row per iteration of every mode, rank and run of a profile: the table
 * `export --format csv` writes and the Python API (python/ds_analyzer/_load.py)
 * reads the same way from the profile's JSON. The columns are defined once here, in ITERATION_COLUMNS (docs/export.md
 * names them); a test holds the Python rows to these.
 * Where the times come from (`t` is an iteration's end): docs/export.md.
 */
import type { Mode } from '../schema/events.js';
import { MODES } from '../schema/modes.js';
import type { CheckpointRecord, EpochRecord, Iteration, ModeResult, Profile, RankResult } from '../schema/profile.js';

/** One iteration of one rank. Times in seconds; start_s and end_s since the Unix epoch. */
export interface IterationRow {
  /** synthetic, cached or cold. */
  mode: Mode;
  /**
   * 'default' for the mode itself; 'cpus=N', 'workers=N' or 'overlap=S' for a sweep point or the overlap probe run in
   * that mode.
   */
  variant: string;
  /** The run of the mode it belongs to, from 1 (a mode measured in several runs of the schedule). */
  run: number;
  rank: number;
  /** Host name of the rank's machine, and its node rank. */
  node: string;
  node_rank: number;
  /** Iteration index within the rank (continued across runs). */
  iteration: number;
  /** The training loader's epoch it belongs to, from 0; null where the job reported no epoch start. */
  epoch: number | null;
  start_s: number;
  end_s: number;
  duration_s: number;
  /** Time the loop waited for the batch, s. */
  wait_s: number;
  /** Time from the batch to the next request, s. */
  compute_s: number;
  samples: number;
  /** Bytes behind the batch; null when not reported. */
  bytes: number | null;
  /** Detected as warm-up and left out of the statistics. */
  warmup: boolean;
  /** The first iteration of an epoch. */
  epoch_start: boolean;
  /** Checkpoint saves made inside this iteration's step, and the time they blocked the loop, s (inside compute_s). */
  checkpoint_saves: number;
  checkpoint_s: number;
  /**
   * Saves made outside the loop just before this iteration (between epochs), and their blocking time, s (in no
   * iteration's time).
   */
  checkpoint_before_saves: number;
  checkpoint_before_s: number;
}

/** The columns, in order: the CSV's header. */
export const ITERATION_COLUMNS = [
  'mode',
  'variant',
  'run',
  'rank',
  'node',
  'node_rank',
  'iteration',
  'epoch',
  'start_s',
  'end_s',
  'duration_s',
  'wait_s',
  'compute_s',
  'samples',
  'bytes',
  'warmup',
  'epoch_start',
  'checkpoint_saves',
  'checkpoint_s',
  'checkpoint_before_saves',
  'checkpoint_before_s',
] as const satisfies readonly (keyof IterationRow)[];

/** The variant of a mode as the profile ran it (never empty: pandas reads an empty CSV field as NaN, not as ''). */
export const DEFAULT_VARIANT = 'default';

/** A mode's result and the variant it is of that mode. */
export interface ModeSeries {
  mode: Mode;
  variant: string;
  result: ModeResult;
}

/** Every series of iterations a profile holds: the modes, then the CPU and worker sweeps and the overlap probe. */
export function modeSeries(profile: Profile): ModeSeries[] {
  const main = MODES.flatMap((mode) => {
    const result = profile.modes[mode];
    return result ? [{ mode, variant: DEFAULT_VARIANT, result }] : [];
  });
  const cpus = (profile.cpuSweep ?? []).map((result) => ({
    mode: result.mode,
    variant: `cpus=${result.cpus?.length ?? 'all'}`,
    result,
  }));
  const workers = (profile.workersSweep ?? []).map((result) => ({
    mode: result.mode,
    variant: `workers=${result.workersAsked ?? 'script'}`,
    result,
  }));
  const probe = profile.overlapProbe;
  const overlap = probe ? [{ mode: probe.mode, variant: `overlap=${probe.residentShare}`, result: probe }] : [];
  return [...main, ...cpus, ...workers, ...overlap];
}

/** Every iteration of the profile, one row each: series by series, rank by rank, in iteration order. */
export function iterationRows(profile: Profile): IterationRow[] {
  return modeSeries(profile).flatMap((series) =>
    [...series.result.ranks].sort((a, b) => a.rank - b.rank).flatMap((rank) => rankRows(profile, series, rank)),
  );
}

function rankRows(profile: Profile, series: ModeSeries, rank: RankResult): IterationRow[] {
  const runStarts = (series.result.passes ?? []).map((pass) => pass.startedAt);
  const epochs = [...(rank.epochs ?? [])].sort((a, b) => a.i - b.i);
  const epochStarts = new Set(epochs.map((e) => e.i));
  const saves = savesByIteration(rank.checkpoints ?? []);
  const warmup = warmupOf(rank);
  return [...rank.iterations]
    .sort((a, b) => a.i - b.i)
    .map((it, index) => {
      const inStep = saves.inStep.get(it.i) ?? [];
      const before = saves.before.get(it.i) ?? [];
      return {
        mode: series.mode,
        variant: series.variant,
        run: runOf(runStarts, it.t),
        rank: rank.rank,
        node: rank.node?.hostname ?? profile.host.hostname,
        node_rank: rank.node?.nodeRank ?? 0,
        iteration: it.i,
        epoch: epochOf(epochs, it.i),
        start_s: (it.t - it.waitMs - it.computeMs) / 1000,
        end_s: it.t / 1000,
        duration_s: (it.waitMs + it.computeMs) / 1000,
        wait_s: it.waitMs / 1000,
        compute_s: it.computeMs / 1000,
        samples: it.samples,
        bytes: it.bytes ?? null,
        warmup: warmup(it, index),
        epoch_start: epochStarts.has(it.i),
        checkpoint_saves: inStep.length,
        checkpoint_s: blockingMs(inStep) / 1000,
        checkpoint_before_saves: before.length,
        checkpoint_before_s: blockingMs(before) / 1000,
      };
    });
}

/**
 * Whether an iteration was warm-up: its flag; in profiles written before the flag (no iteration of the rank has one),
 * the first summary.warmupIterations.
 */
export function warmupOf(rank: RankResult): (it: Iteration, index: number) => boolean {
  if (rank.iterations.some((it) => it.warmup === true)) return (it) => it.warmup === true;
  const first = rank.summary?.warmupIterations ?? 0;
  return (_it, index) => index < first;
}

/** The run an iteration ended in: the last run that had started by then, from 1 (1 for a mode run once). */
export function runOf(runStarts: readonly number[], endMs: number): number {
  let run = 1;
  runStarts.forEach((startedAt, index) => {
    if (startedAt <= endMs) run = index + 1;
  });
  return run;
}

/** The epoch whose start is the last at or before iteration `i`; null before the first reported start. */
function epochOf(sortedEpochs: readonly EpochRecord[], i: number): number | null {
  let epoch: number | null = null;
  for (const e of sortedEpochs) if (e.i <= i) epoch = e.epoch;
  return epoch;
}

/**
 * A save's `i` is the iterations its process had recorded when it began: in a step, that is the iteration whose step it
 * ran in; outside the loop (between epochs), the iteration that came next.
 */
export function savesByIteration(saves: readonly CheckpointRecord[]): {
  inStep: Map<number, CheckpointRecord[]>;
  before: Map<number, CheckpointRecord[]>;
} {
  const inStep = new Map<number, CheckpointRecord[]>();
  const before = new Map<number, CheckpointRecord[]>();
  for (const save of saves) {
    const map = save.inStep ? inStep : before;
    map.set(save.i, [...(map.get(save.i) ?? []), save]);
  }
  return { inStep, before };
}

/** The time saves blocked the training loop, ms. */
export function blockingMs(saves: readonly CheckpointRecord[]): number {
  return saves.reduce((sum, save) => sum + save.blockingMs, 0);
}
