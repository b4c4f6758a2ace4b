/**
 * A profile as TensorBoard scalars: one run (a folder of the log dir) per mode, sweep point and rank, each with the
 * same tags, so that TensorBoard draws the modes over each other in one chart; and a `split` run with the split's
 * figures. The tags and their steps are listed in docs/export.md.
 */
import type { Profile } from '../schema/profile.js';
import { DEFAULT_VARIANT, modeSeries } from './iteration-rows.js';
import { eventFile, type Scalar } from './tfrecord.js';

/** One run of the log dir: its folder name and its scalars. */
export interface TensorBoardRun {
  /** Folder under the log dir (one path segment). */
  dir: string;
  scalars: Scalar[];
}

/** The runs of a profile. */
export function tensorBoardRuns(profile: Profile): TensorBoardRun[] {
  const createdSec = Date.parse(profile.createdAt) / 1000;
  const runs: TensorBoardRun[] = [];
  for (const series of modeSeries(profile)) {
    const ranks = [...series.result.ranks].sort((a, b) => a.rank - b.rank);
    for (const rank of ranks) {
      const variant = series.variant === DEFAULT_VARIANT ? '' : series.variant;
      const name = [series.mode, variant, ranks.length > 1 ? `rank${rank.rank}` : ''].filter(Boolean).join('-');
      // Step 0 first, then the iterations in order: steps never go back within a file.
      const scalars: Scalar[] = [];
      const summary = rank.summary;
      if (summary) {
        const at = { step: 0, wallTimeSec: series.result.startedAt / 1000 };
        scalars.push({ tag: 'summary/iteration_ms', ...at, value: summary.iterMs.mean });
        scalars.push({ tag: 'summary/data_wait_ms', ...at, value: summary.waitMs.mean });
        scalars.push({ tag: 'summary/samples_per_sec', ...at, value: summary.samplesPerSec });
      }
      for (const it of [...rank.iterations].sort((a, b) => a.i - b.i)) {
        const wallTimeSec = it.t / 1000;
        const iterMs = it.waitMs + it.computeMs;
        scalars.push({ tag: 'iteration/time_ms', step: it.i, wallTimeSec, value: iterMs });
        scalars.push({ tag: 'iteration/data_wait_ms', step: it.i, wallTimeSec, value: it.waitMs });
        if (iterMs > 0)
          scalars.push({
            tag: 'iteration/samples_per_sec',
            step: it.i,
            wallTimeSec,
            value: it.samples / (iterMs / 1000),
          });
      }
      runs.push({ dir: safeDir(name), scalars });
    }
  }
  const split = splitScalars(profile, Number.isFinite(createdSec) ? createdSec : 0);
  if (split.length > 0) runs.push({ dir: 'split', scalars: split });
  return runs;
}

function splitScalars(profile: Profile, wallTimeSec: number): Scalar[] {
  const a = profile.analysis;
  if (!a) return [];
  const figures: [string, number | null | undefined][] = [
    ['split/compute_ms', a.computeMs?.mean],
    ['split/prep_stall_ms', a.prepStallMs?.mean],
    ['split/fetch_stall_ms', a.fetchStallMs?.mean],
    ['split/iteration_ms', a.iterMs?.mean],
    ['split/prep_stall_fraction', a.prepStallFraction],
    ['split/fetch_stall_fraction', a.fetchStallFraction],
    ['split/checkpoint_stall_ms', a.checkpointStall?.ms.mean],
    ['split/boundary_stall_ms', a.boundaryStall?.ms.mean],
  ];
  return figures.flatMap(([tag, value]) => (typeof value === 'number' ? [{ tag, step: 0, wallTimeSec, value }] : []));
}

/** A run's name as one folder name: '=' and '.' kept, path separators and the rest replaced. */
function safeDir(name: string): string {
  return name.replace(/[^A-Za-z0-9_.=-]/g, '_');
}

/** The event file's name, as TensorFlow's writer names it: events.out.tfevents.<seconds>.<host>. */
export function eventFileName(profile: Profile): string {
  const sec = Math.floor(Date.parse(profile.createdAt) / 1000);
  const host = profile.host.hostname.replace(/[^A-Za-z0-9_.-]/g, '_') || 'localhost';
  return `events.out.tfevents.${Number.isFinite(sec) ? sec : 0}.${host}`;
}

/** A run's event file's bytes. */
export function runEventFile(profile: Profile, run: TensorBoardRun): Buffer {
  const createdSec = Date.parse(profile.createdAt) / 1000;
  return eventFile(Number.isFinite(createdSec) ? createdSec : 0, run.scalars);
}
