import { ProfileSchema, type Profile } from '../../src/schema/profile.js';
import type { ArtifactSink } from '../../src/store/artifact-sink.js';

/**
 * An ArtifactSink in memory, for tests: each profile is validated as
 * writeProfile validates it and kept as the JSON it would have written, so a
 * test reads back what a reader of the file would.
 */
export class MemorySink implements ArtifactSink {
  /** Each file's last text, by path (a profile as its JSON). */
  readonly files = new Map<string, string>();
  /** Folders made. */
  readonly folders = new Set<string>();
  /** Paths of the profile saves, in order (one per save). */
  readonly profileSaves: string[] = [];

  saveProfile(path: string, profile: Profile): void {
    this.files.set(path, JSON.stringify(ProfileSchema.parse(profile), null, 1) + '\n');
    this.profileSaves.push(path);
  }

  makeFolder(path: string): void {
    this.folders.add(path);
  }

  writeText(path: string, text: string): void {
    this.files.set(path, text);
  }

  /** The profile last saved at `path`, parsed back; throws when none was. */
  profile(path: string): Profile {
    const text = this.files.get(path);
    if (text === undefined) throw new Error(`no profile saved at ${path}`);
    return ProfileSchema.parse(JSON.parse(text));
  }
}
