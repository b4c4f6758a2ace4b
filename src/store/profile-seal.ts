// The seal a profile's writer puts on the file, its last field `"integrity": "sha256:<hex>"`: the SHA-256 of the text
// without it, keyed by the tool's version, PROFILE_SCHEMA_VERSION and the schema modules' compiled source. A reader
// whose key and hash match skips validation (zod not even loaded); any other file is validated in full. It detects
// accident (an edit, a truncated copy, another build), not intent: the key is no secret, so a profile from a source not
// trusted is made to be validated by removing its `integrity` line.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Profile } from '../schema/profile.js';
import { PROFILE_SCHEMA_VERSION } from '../schema/versions.js';
import { TOOL_VERSION } from '../version.js';

/** The compiled schema modules: profile.ts and all it imports (test/store/profile-seal.test.ts checks the list). */
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

/** This build's key: the tool's version, the profile format's and the schema's source, hashed once a process. */
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

/** A profile file's text: `valid` (ProfileSchema's output) as indented JSON, this build's seal last. */
export function sealedProfileText(valid: Profile): string {
  const unsealed: Profile = { ...valid };
  delete unsealed.integrity;
  const body = JSON.stringify(unsealed, null, 1); // '{\n ...\n}'
  return `${body.slice(0, -2)}${SEAL_START}${digest(body)}${SEAL_END}`;
}

/** The profile in a file's text when its seal is this build's and matches, else null: it must be validated. */
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
