import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import { PROFILE_SCHEMA_VERSION, ProfileSchema, type Profile } from '../schema/profile.js';

/** A file name for a new profile: <job>-<UTC stamp>.json in `dir`. */
export function newProfilePath(dir: string, jobName: string, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  const safeName = jobName.replace(/[^A-Za-z0-9_.-]+/g, '_').slice(0, 60) || 'job';
  return join(dir, `${safeName}-${stamp}.json`);
}

/** Folder beside a profile for its events and job logs. */
export function artefactsDir(profilePath: string): string {
  return profilePath.replace(/\.json$/, '') + '.d';
}

/**
 * Validates and writes a profile atomically (temp file + rename in the same
 * folder), so a reader or a crash never sees half a profile.
 */
export function writeProfile(path: string, profile: Profile): void {
  const valid = ProfileSchema.parse(profile);
  mkdirSync(dirname(path), { recursive: true });
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  writeFileSync(temp, JSON.stringify(valid, null, 1) + '\n');
  renameSync(temp, path);
}

/** Reads and validates a profile; a missing or corrupt file is a one-line UserError. */
export function readProfile(path: string): Profile {
  if (!existsSync(path)) {
    throw new UserError(`profile '${path}' does not exist: run 'ds-analyzer profile' first or pass a profile file`, ExitCode.MissingInput);
  }
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    throw new UserError(`profile '${path}' is not valid JSON: re-run 'ds-analyzer profile' to write a new one`, ExitCode.CorruptFile);
  }
  const version = (json as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (version !== PROFILE_SCHEMA_VERSION) {
    throw new UserError(
      `profile '${path}' has schemaVersion ${JSON.stringify(version)}, this ds-analyzer reads ${PROFILE_SCHEMA_VERSION}: re-run 'ds-analyzer profile'`,
      ExitCode.CorruptFile,
    );
  }
  const parsed = ProfileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UserError(
      `profile '${path}' is malformed at '${issue.path.join('.') || '(top)'}': ${issue.message}; re-run 'ds-analyzer profile'`,
      ExitCode.CorruptFile,
    );
  }
  return parsed.data;
}

/** The most recently written profile in `dir`, or a UserError saying how to make one. */
export function newestProfile(dir: string): string {
  const candidates = existsSync(dir)
    ? readdirSync(dir)
        .filter((name) => name.endsWith('.json') && !name.startsWith('.'))
        .map((name) => join(dir, name))
    : [];
  if (candidates.length === 0) {
    throw new UserError(`no profile in '${dir}': run 'ds-analyzer profile' (or 'ds-analyzer demo') first, or pass a profile file`, ExitCode.MissingInput);
  }
  return candidates.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
}
