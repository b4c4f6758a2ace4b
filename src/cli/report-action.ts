import { relative, resolve } from 'node:path';
import { ExitCode } from '../errors.js';
import { readProfile } from '../store/profile-store.js';
import { newestProfile } from '../store/profile-files.js';
import { Redactor, redactProfile } from '../store/redact.js';
import { modelWhatIf } from '../report/whatif-adapter.js';
import { reportNotes, writeReport } from '../report/write-report.js';
import type { Io } from './io.js';

/** Options of `report` as commander hands them over. */
export interface RawReportOptions {
  outDir: string;
  profilesDir: string;
  redact?: boolean;
}

/** What `report` does once commander has parsed its flags: writes the report files and names them. */
export async function reportAction(profileArg: string | undefined, raw: RawReportOptions, io: Io): Promise<ExitCode> {
  const profilePath = profileArg ? resolve(io.cwd, profileArg) : newestProfile(resolve(io.cwd, raw.profilesDir));
  const places = { home: io.env.HOME ?? null, cwd: io.cwd };
  const profile = raw.redact ? redactProfile(readProfile(profilePath), places) : readProfile(profilePath);
  const named = profileArg ?? profilePath;
  const written = await writeReport(
    profile,
    raw.redact ? new Redactor(places).path(named) : named,
    resolve(io.cwd, raw.outDir),
    modelWhatIf,
  );
  const show = (path: string) => relative(io.cwd, path) || path;
  io.stdout(`report: ${show(written.html)}\n        ${show(written.markdown)} (+ ${written.pngs.length} PNG charts)\n`);
  for (const note of reportNotes(written)) io.stderr(`ds-analyzer: ${note}\n`);
  return ExitCode.Ok;
}
