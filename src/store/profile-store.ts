import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { ExitCode, isDiskFull, UserError } from '../errors.js';
import { ProfileSchema, type Profile } from '../schema/profile.js';
import { truncateLogs } from './free-space.js';
import { artefactsDir, readProfileFile } from './profile-files.js';
import { sealedProfileText } from './profile-seal.js';
import { ONE_PARSE, validateProfile } from './profile-validation.js';
import { STORE_TEXT } from './store-text.js';
import { writeAtomic } from './write-atomic.js';

/** Writes a file's whole text; tests pass one that fails as a full disk does. */
export type WriteText = (path: string, text: string) => void;

/**
 * Validates and writes a profile atomically (writeAtomic), so a reader or a
 * crash never sees half a profile. The file is sealed (profile-seal.ts): a
 * reader of this build takes it as valid without validating it again.
 *
 * On a full disk (ENOSPC, EDQUOT) the profile, a few hundred kB, is what must
 * survive; the job's logs in the artefacts folder are what fills it. So the
 * logs of the finished runs are cut to their tails and the write is tried
 * once more; what was cut is added to the profile's warnings. If it still
 * does not fit, one line names the path and the fix (exit code 8), and the
 * profile written after the previous run stays as it was.
 */
export function writeProfile(
  path: string,
  profile: Profile,
  write: WriteText = (file, text) => writeFileSync(file, text),
): void {
  const attempt = () => {
    const valid = ProfileSchema.parse(profile, ONE_PARSE);
    mkdirSync(dirname(path), { recursive: true });
    writeAtomic(path, sealedProfileText(valid), write);
  };
  try {
    attempt();
  } catch (error) {
    if (!isDiskFull(error)) throw error;
    const freed = truncateLogs(artefactsDir(path));
    if (freed.files === 0) {
      throw new UserError(STORE_TEXT.diskFull(dirname(path), basename(path)), ExitCode.Environment);
    }
    profile.warnings.push(STORE_TEXT.logsCut(freed.files, artefactsDir(path), freed.keptBytesPerLog, freed.freedBytes));
    try {
      attempt();
    } catch (retryError) {
      if (!isDiskFull(retryError)) throw retryError;
      const message = STORE_TEXT.diskFullAfterCut(dirname(path), basename(path), freed.freedBytes);
      throw new UserError(message, ExitCode.Environment);
    }
  }
}

/**
 * Reads and validates a profile; a missing or corrupt file is a one-line
 * UserError. A file sealed by this build (profile-seal.ts) is not validated
 * again; loadProfile (profile-files.ts) is the same without loading the
 * schema for such a file.
 */
export function readProfile(path: string): Profile {
  const read = readProfileFile(path);
  return 'sealed' in read ? read.sealed : validateProfile(path, read.unchecked);
}
