// Where profile and validate leave what they measured: the profile file and the files beside the job's logs. The CLI
// writes them to disk (fileSink); a test of a whole profile or validate on a FakeDataSource and a fake mode runner
// passes a MemorySink (test/support/memory-sink.ts) and touches no file.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Profile } from '../schema/profile.js';
import { writeProfile } from './profile-store.js';
import { redactProfile, type RedactionPlaces } from './redact.js';

/** What a run saves, by path. */
export interface ArtifactSink {
  /** Saves the profile at `path`, validated and whole (writeProfile's contract). */
  saveProfile(path: string, profile: Profile): void;
  /** Makes the folder at `path`, with its parents. */
  makeFolder(path: string): void;
  /** Writes the text file at `path`, its folder made first. */
  writeText(path: string, text: string): void;
}

/** The sink on this machine's disk: profiles through writeProfile (atomic; logs cut on a full disk). */
export const fileSink: ArtifactSink = {
  saveProfile: (path, profile) => writeProfile(path, profile),
  makeFolder: (path) => void mkdirSync(path, { recursive: true }),
  writeText: (path, text) => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  },
};

/** A sink that writes every profile with --redact applied (redact.ts); the files beside it pass unchanged. */
export function redactingSink(inner: ArtifactSink, places: RedactionPlaces): ArtifactSink {
  return { ...inner, saveProfile: (path, profile) => inner.saveProfile(path, redactProfile(profile, places)) };
}
