import { relative, resolve } from 'node:path';
import { ExitCode, valueError } from '../errors.js';
import { EXPORT_TEXT } from '../export/export-text.js';
import { defaultExportPath, EXPORT_FORMATS, writeExport, type ExportFormat } from '../export/write-export.js';
import { readProfile } from '../store/profile-store.js';
import type { Io } from './io.js';

/** Options of `export` as commander hands them over. */
export interface RawExportOptions {
  format: string;
  out?: string;
  force?: boolean;
}

/** What `export` does once commander has parsed its flags: writes the export and names it. */
export function exportAction(profileArg: string, raw: RawExportOptions, io: Io): ExitCode {
  const format = parseFormat(raw.format);
  const profilePath = resolve(io.cwd, profileArg);
  const profile = readProfile(profilePath);
  const out = raw.out ? resolve(io.cwd, raw.out) : defaultExportPath(profilePath, format);
  const written = writeExport(profile, format, out, raw.force === true);
  io.stdout(`export: ${relative(io.cwd, written.path) || written.path} (${format}: ${written.what})\n`);
  return ExitCode.Ok;
}

function parseFormat(value: string): ExportFormat {
  const format = EXPORT_FORMATS.find((f) => f === value);
  if (!format) throw valueError(EXPORT_TEXT.notAFormat(value, EXPORT_FORMATS));
  return format;
}
