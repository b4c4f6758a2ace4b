// A profile's parsed JSON checked against the schema (zod): the one step of reading a profile that needs zod, apart
// from profile-files.ts (which loads this module only for a file not sealed by this build) and profile-store.ts.
import { ExitCode, UserError } from '../errors.js';
import { ProfileSchema, type Profile } from '../schema/profile.js';
import { STORE_TEXT } from './store-text.js';

/**
 * A profile is parsed once a process: zod's compiled checks (a `new Function` per object schema) cost more to build
 * than they save on one parse (48 to 49 ms against 36 to 43 ms for a 155 KiB profile here).
 */
export const ONE_PARSE = { jitless: true } as const;

/** Validates a profile's parsed JSON read from `path`; the first problem is a one-line UserError (exit 7). */
export function validateProfile(path: string, json: unknown): Profile {
  const parsed = ProfileSchema.safeParse(json, ONE_PARSE);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue.path.join('.') || '(top)';
    throw new UserError(STORE_TEXT.malformed(path, at, issue.message), ExitCode.CorruptFile);
  }
  // A profile in memory carries no seal: it would not match once the profile changed.
  delete parsed.data.integrity;
  return parsed.data;
}
