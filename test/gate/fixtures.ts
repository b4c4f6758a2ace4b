import { fileURLToPath } from 'node:url';
import { readProfile } from '../../src/store/profile-store.js';
import type { Profile } from '../../src/schema/profile.js';

/** Absolute path of a fixture profile under test/fixtures/profiles/gate. */
export function fixturePath(name: string): string {
  return fileURLToPath(new URL(`../../../test/fixtures/profiles/gate/${name}.json`, import.meta.url));
}

/** A fixture profile, validated. */
export function fixture(name: string): Profile {
  return readProfile(fixturePath(name));
}
