// Profile files without the schema: their names, the newest in a folder, and reading one up to validation;
// `loadProfile` loads zod and the schema only for a file not sealed by this build (profile-seal.ts).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import type { Profile } from '../schema/profile.js';
import { PROFILE_SCHEMA_VERSION } from '../schema/versions.js';
import { unsealedProfile } from './profile-seal.js';
import { STORE_TEXT } from './store-text.js';

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

/** The most recently written profile in `dir`, or a UserError saying how to make one. */
export function newestProfile(dir: string): string {
  const candidates = existsSync(dir)
    ? readdirSync(dir)
        .filter((name) => name.endsWith('.json') && !name.startsWith('.'))
        .map((name) => join(dir, name))
    : [];
  if (candidates.length === 0) {
    throw new UserError(STORE_TEXT.noProfile(dir), ExitCode.MissingInput);
  }
  // One stat a file, not one per comparison.
  const written = candidates.map((path) => ({ path, mtimeMs: statSync(path).mtimeMs }));
  return written.reduce((newest, file) => (file.mtimeMs > newest.mtimeMs ? file : newest)).path;
}

/** A profile file read: the profile when its seal vouches for it, else its JSON, still to be validated. */
export type ProfileRead = { sealed: Profile } | { unchecked: unknown };

/** Reads a profile file up to validation (a sealed one whole); a missing, unreadable or bad file is a UserError. */
export function readProfileFile(path: string): ProfileRead {
  if (!existsSync(path)) {
    throw new UserError(STORE_TEXT.missing(path), ExitCode.MissingInput);
  }
  const text = readText(path);
  const sealed = unsealedProfile(text);
  if (sealed) return { sealed };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UserError(STORE_TEXT.notJson(path), ExitCode.CorruptFile);
  }
  const version = (json as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (version !== PROFILE_SCHEMA_VERSION) {
    throw new UserError(STORE_TEXT.otherVersion(path, version, PROFILE_SCHEMA_VERSION), ExitCode.CorruptFile);
  }
  return { unchecked: json };
}

/** The file's text; a folder or a file this user cannot read is a one-line UserError (exit 4), not a crash. */
function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EISDIR') throw new UserError(STORE_TEXT.isFolder(path), ExitCode.MissingInput);
    if (code === 'EACCES' || code === 'EPERM') throw new UserError(STORE_TEXT.unreadable(path), ExitCode.MissingInput);
    throw error;
  }
}

/** readProfile (profile-store.ts), loading zod and the schema only for a file not sealed by this build. */
export async function loadProfile(path: string): Promise<Profile> {
  const read = readProfileFile(path);
  if ('sealed' in read) return read.sealed;
  const { validateProfile } = await import('./profile-validation.js');
  return validateProfile(path, read.unchecked);
}
