/**
 * Writes a profile's export: the CSV, the trace or the TensorBoard log dir. An existing output is never replaced
 * silently: without `force` it is an error naming --out and --force.
 */
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ExitCode, isDiskFull, UserError } from '../errors.js';
import type { Profile } from '../schema/profile.js';
import { writeAtomic } from '../store/write-atomic.js';
import { EXPORT_TEXT } from './export-text.js';
import { chromeTrace } from './chrome-trace.js';
import { iterationsCsv } from './csv.js';
import { iterationRows } from './iteration-rows.js';
import { eventFileName, runEventFile, tensorBoardRuns } from './tensorboard.js';

/** The formats `export` writes. */
export const EXPORT_FORMATS = ['csv', 'chrome-trace', 'tensorboard'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** What was written. */
export interface WrittenExport {
  /** The file, or the TensorBoard log dir. */
  path: string;
  /** Files written (the event files of a log dir, one per run). */
  files: string[];
  /** What it holds, for the one line the command prints. */
  what: string;
}

/** The default output beside the profile: NAME.csv, NAME.trace.json, NAME-tensorboard/. */
export function defaultExportPath(profilePath: string, format: ExportFormat): string {
  const stem = basename(profilePath).replace(/\.json$/i, '');
  const name =
    format === 'csv' ? `${stem}.csv` : format === 'chrome-trace' ? `${stem}.trace.json` : `${stem}-tensorboard`;
  return join(dirname(profilePath), name);
}

/** Writes `profile` as `format` to `out`. */
export function writeExport(profile: Profile, format: ExportFormat, out: string, force: boolean): WrittenExport {
  refuseOverwrite(out, format, force);
  try {
    return write(profile, format, out);
  } catch (error) {
    if (isDiskFull(error)) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'ENOTDIR' || code === 'EISDIR') {
      throw new UserError(EXPORT_TEXT.cannotWrite(out, code), ExitCode.Environment);
    }
    throw error;
  }
}

function write(profile: Profile, format: ExportFormat, out: string): WrittenExport {
  if (format === 'csv') {
    const rows = iterationRows(profile);
    mkdirSync(dirname(out), { recursive: true });
    writeAtomic(out, iterationsCsv(rows));
    return { path: out, files: [out], what: `${rows.length} iterations` };
  }
  if (format === 'chrome-trace') {
    const trace = chromeTrace(profile);
    mkdirSync(dirname(out), { recursive: true });
    writeAtomic(out, JSON.stringify(trace));
    return { path: out, files: [out], what: `${trace.traceEvents.length} trace events` };
  }
  const runs = tensorBoardRuns(profile);
  const files = runs.map((run) => {
    const dir = join(out, run.dir);
    mkdirSync(dir, { recursive: true });
    const file = join(dir, eventFileName(profile));
    writeAtomic(file, runEventFile(profile, run));
    return file;
  });
  const scalars = runs.reduce((sum, run) => sum + run.scalars.length, 0);
  return { path: out, files, what: `${scalars} scalars in ${runs.length} runs` };
}

function refuseOverwrite(out: string, format: ExportFormat, force: boolean): void {
  if (force || !existsSync(out)) return;
  const isDir = statSync(out).isDirectory();
  if (format === 'tensorboard') {
    if (!isDir) throw new UserError(EXPORT_TEXT.notLogDir(out), ExitCode.Usage);
    if (readdirSync(out).length === 0) return;
  } else if (isDir) {
    throw new UserError(EXPORT_TEXT.isFolder(out, format), ExitCode.Usage);
  }
  throw new UserError(EXPORT_TEXT.exists(out), ExitCode.Usage);
}
