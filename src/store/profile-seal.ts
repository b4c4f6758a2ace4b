/**
 * The seal a profile's writer puts on the file, so that a reader can tell a
 * file this very build validated and wrote, untouched since, from any other.
 *
 * The seal is the profile's last field, `"integrity": "sha256:<hex>"`: the
 * SHA-256 of the file's text without that field, keyed by the tool's version,
 * PROFILE_SCHEMA_VERSION and the compiled source of the schema modules. A
 * reader whose own key and hash match skips validating the profile again
 * (zod is then not even loaded); a file of another version or schema, edited,
 * corrupt or unsealed is validated in full, as before the seal.
 *
 * The seal detects accident (an edit, a truncated copy, another build), not
 * intent: the key is no secret, so a file forged with a matching seal is read
 * unvalidated. A profile is the user's own measurement, read by the user's own
 * CLI; one from a source not trusted is made valid again by removing its
 * `integrity` line.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Profile } from '../schema/profile.js';
import { PROFILE_SCHEMA_VERSION } from '../schema/versions.js';
import { TOOL_VERSION } from '../version.js';

/**
 * The compiled modules, beside src/schema/profile.ts's, whose source is the
 * profile's schema: profile.ts and every module it imports
 * (test/store/profile-seal.test.ts checks the list against the imports).
 */
export const SCHEMA_MODULES = [
  'profile.js',
  'profile-analysis.js',
  'profile-host.js',
  'profile-measures.js',
  'profile-run.js',
  'numbers.js',
  'events.js',
  'modes.js',
  'versions.js',
] as const;

/** What precedes the seal's hex in a sealed file: the last member of the top-level object. */
const SEAL_START = ',\n "integrity": "sha256:';
/** What follows the hex: the object's end and the file's last newline. */
const SEAL_END = '"\n}\n';
const HEX_LENGTH = 64;

let key: string | undefined;

/**
 * This build's key: the tool's version, the profile format's and the schema's compiled source, hashed (once a process).
 */
export function sealKey(): string {
  if (key === undefined) {
    const hash = createHash('sha256').update(`ds-analyzer profile seal\0${TOOL_VERSION}\0${PROFILE_SCHEMA_VERSION}\0`);
    for (const name of SCHEMA_MODULES)
      hash.update(readFileSync(new URL(`../schema/${name}`, import.meta.url))).update('\0');
    key = hash.digest('hex');
  }
  return key;
}

/** The seal's hex of a profile's text without its seal. */
function digest(body: string): string {
  return createHash('sha256').update(sealKey()).update('\0').update(body).digest('hex');
}

/**
 * The text of a profile file: `valid` (ProfileSchema's output) as indented
 * JSON, any seal it carried dropped and this build's seal added last.
 */
export function sealedProfileText(valid: Profile): string {
  const unsealed: Profile = { ...valid };
  delete unsealed.integrity;
  const body = JSON.stringify(unsealed, null, 1); // '{\n ...\n}'
  return `${body.slice(0, -2)}${SEAL_START}${digest(body)}${SEAL_END}`;
}

/**
 * The profile in a file's text when its seal is this build's and matches the
 * text (its seal dropped), else null: the file must be validated.
 */
export function unsealedProfile(text: string): Profile | null {
  const start = text.length - SEAL_END.length - HEX_LENGTH - SEAL_START.length;
  if (start < 1 || !text.endsWith(SEAL_END) || !text.startsWith(SEAL_START, start)) return null;
  const hex = text.slice(start + SEAL_START.length, text.length - SEAL_END.length);
  if (hex !== digest(`${text.slice(0, start)}\n}`)) return null;
  let profile: Profile;
  try {
    profile = JSON.parse(text) as Profile;
  } catch {
    return null;
  }
  delete profile.integrity;
  return profile;
}
