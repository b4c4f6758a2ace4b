import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import { PROFILE_SCHEMA_VERSION, ProfileSchema, type Profile } from '../schema/profile.js';
import { formatBytes } from '../units.js';
import { isDiskFull, truncateLogs } from './free-space.js';
import { writeAtomic } from './write-atomic.js';

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

/** Writes a file's whole text; tests pass one that fails as a full disk does. */
export type WriteText = (path: string, text: string) => void;

/**
 * Validates and writes a profile atomically (writeAtomic), so a reader or a
 * crash never sees half a profile.
 *
 * On a full disk (ENOSPC, EDQUOT) the profile, a few hundred kB, is what must
 * survive; the job's logs in the artefacts folder are what fills it. So the
 * logs of the finished runs are cut to their tails and the write is tried
 * once more; what was cut is added to the profile's warnings. If it still
 * does not fit, one line names the path and the fix (exit code 8), and the
 * profile written after the previous run stays as it was.
 */
export function writeProfile(path: string, profile: Profile, write: WriteText = (file, text) => writeFileSync(file, text)): void {
  const attempt = () => {
    const valid = ProfileSchema.parse(profile);
    mkdirSync(dirname(path), { recursive: true });
    writeAtomic(path, JSON.stringify(valid, null, 1) + '\n', write);
  };
  try {
    attempt();
  } catch (error) {
    if (!isDiskFull(error)) throw error;
    const freed = truncateLogs(artefactsDir(path));
    const fix = `free space there, or pass --out or --profiles-dir on another file system`;
    if (freed.files === 0) {
      throw new UserError(`no space left on the device of ${dirname(path)} to write the profile ${basename(path)}: ${fix}`, ExitCode.Environment);
    }
    profile.warnings.push(
      `the disk was full when the profile was written: the job's logs of ${freed.files} run(s) in ${artefactsDir(path)} were cut to their last ` +
        `${formatBytes(freed.keptBytesPerLog)} each, freeing ${formatBytes(freed.freedBytes)}`,
    );
    try {
      attempt();
    } catch (retryError) {
      if (!isDiskFull(retryError)) throw retryError;
      throw new UserError(
        `no space left on the device of ${dirname(path)} to write the profile ${basename(path)}, even after cutting the job's logs to their tails ` +
          `(${formatBytes(freed.freedBytes)} freed): ${fix}`,
        ExitCode.Environment,
      );
    }
  }
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
