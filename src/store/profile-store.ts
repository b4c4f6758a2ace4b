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
 * Validates and writes a profile atomically and sealed (profile-seal.ts). On a full disk the profile is what must
 * survive, and the job's logs are what fill it: they are cut to their tails (said in the warnings) and the write tried
 * once more; if it still fails, a one-line UserError, and the previous profile stays as it was.
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

/** Reads and validates a profile (a sealed one is not validated again); a missing or corrupt file is a UserError. */
export function readProfile(path: string): Profile {
  const read = readProfileFile(path);
  return 'sealed' in read ? read.sealed : validateProfile(path, read.unchecked);
}
