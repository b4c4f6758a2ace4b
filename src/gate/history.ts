/**
 * The history gate: main's profiles of one job, in the time each recorded (createdAt), as series of the cold mode's
 * iteration time per sample and its fetch and prep stalls per sample; change points found by E-divisive means
 * (compare/change-points.ts). The gate fails when the newest step in the iteration time is a slowdown beyond the budget
 * that began among the newest profiles: a step further back has been lived with already.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { changePoints, CHANGE_POINT_DEFAULTS } from '../compare/change-points.js';
import { ExitCode, UserError } from '../errors.js';
import type { HistoryVerdict } from '../schema/history-output.js';
import type { Profile } from '../schema/profile.js';
import { loadProfile } from '../store/profile-files.js';
import { HISTORY_TEXT } from './history-text.js';

/** A step that began among this many newest profiles can fail the gate. */
export const RECENT_PROFILES = 5;
/** Fewest profiles the gate judges: a segment either side of a step. */
export const LEAST_PROFILES = 2 * CHANGE_POINT_DEFAULTS.minSegment;

export type { HistoryVerdict };
/** One profile of the history, in time order. */
export type HistoryPoint = HistoryVerdict['points'][number];
/** A series and the steps found in it. */
export type HistorySeries = HistoryVerdict['series'][number];

/** The folder's profiles of one job, oldest first; one-line UserErrors for a missing folder or mixed jobs. */
export async function loadHistory(dir: string, warn: (text: string) => void): Promise<HistoryPoint[]> {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new UserError(HISTORY_TEXT.folderMissing(dir), ExitCode.MissingInput);
  }
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.json') && !name.startsWith('.'))
    .sort();
  const loaded: { file: string; profile: Profile }[] = [];
  for (const file of files) loaded.push({ file, profile: await loadProfile(join(dir, file)) });
  const jobs = [...new Set(loaded.map((l) => l.profile.jobName))];
  if (jobs.length > 1) throw new UserError(HISTORY_TEXT.otherJobs(dir, jobs), ExitCode.Usage);
  const commands = new Set(loaded.map((l) => JSON.stringify(l.profile.command)));
  if (commands.size > 1) warn(HISTORY_TEXT.otherCommands(commands.size));
  const points: HistoryPoint[] = [];
  for (const { file, profile } of loaded) {
    const point = pointOf(basename(file), profile);
    if (point) points.push(point);
    else warn(HISTORY_TEXT.skipped(file, HISTORY_TEXT.noCold));
  }
  if (points.length < LEAST_PROFILES) {
    throw new UserError(HISTORY_TEXT.tooFew(dir, points.length, LEAST_PROFILES), ExitCode.MissingInput);
  }
  // Each profile's own recorded start, not the file's mtime (a restored cache rewrites those); the name breaks ties.
  return points.sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt) || a.file.localeCompare(b.file));
}

function pointOf(file: string, profile: Profile): HistoryPoint | null {
  const summary = profile.modes.cold?.summary;
  if (!summary || !(summary.samplesPerIter > 0) || !Number.isFinite(summary.iterMs.mean)) return null;
  const perSample = (ms: number | undefined) => (ms === undefined ? null : ms / summary.samplesPerIter);
  return {
    file,
    createdAt: profile.createdAt,
    msPerSample: summary.iterMs.mean / summary.samplesPerIter,
    fetchMsPerSample: perSample(profile.analysis?.fetchStallMs?.mean),
    prepMsPerSample: perSample(profile.analysis?.prepStallMs?.mean),
  };
}

/** Finds the steps of each series and judges the newest step of the iteration time against `maxRegression`. */
export function judgeHistory(points: HistoryPoint[], maxRegression: number, seed = 1): HistoryVerdict {
  const pValue = CHANGE_POINT_DEFAULTS.pValue;
  const series: HistorySeries[] = [{ name: 'iteration time', values: points.map((p) => p.msPerSample), changes: [] }];
  const stalls = [
    ['fetch stall', points.map((p) => p.fetchMsPerSample)],
    ['prep stall', points.map((p) => p.prepMsPerSample)],
  ] as const;
  for (const [name, values] of stalls) {
    if (values.every((v): v is number => v !== null)) series.push({ name, values, changes: [] });
  }
  for (const s of series) s.changes = changePoints(s.values, { pValue, seed });
  const newest = series[0].changes.at(-1) ?? null;
  const failing =
    newest !== null &&
    newest.index >= points.length - RECENT_PROFILES &&
    newest.relative !== null &&
    newest.relative > maxRegression
      ? newest
      : null;
  return {
    points,
    series,
    maxRegression,
    pValue,
    failing,
    exitCode: failing ? ExitCode.GateFailed : ExitCode.Ok,
  };
}
