// Messages of reading and writing profiles, shown to users: one line each, with the cause and the fix. profile-files.ts
// and profile-store.ts decide; the words live here. profile-files.ts is on the path of gate and whatif on a sealed
// profile, which loads neither zod nor the schemas: import nothing heavier than units.ts here.
import { formatBytes } from '../units.js';

/** The fix for a full disk under the profile. */
const DISK_FULL_FIX = 'free space there, or pass --out or --profiles-dir on another file system';

/** Messages of the profile files (one line each: cause, fix). */
export const STORE_TEXT = {
  noProfile: (dir: string) =>
    `no profile in '${dir}': run 'ds-analyzer profile' (or 'ds-analyzer demo') first, or pass a profile file`,
  missing: (path: string) => `profile '${path}' does not exist: run 'ds-analyzer profile' first or pass a profile file`,
  isFolder: (path: string) => `profile '${path}' is a folder, not a profile file: pass one of the .json profiles in it`,
  unreadable: (path: string) =>
    `profile '${path}' cannot be read by this user: fix its permissions, or run as the user who wrote it`,
  notJson: (path: string) => `profile '${path}' is not valid JSON: re-run 'ds-analyzer profile' to write a new one`,
  otherVersion: (path: string, version: unknown, reads: number) =>
    `profile '${path}' has schemaVersion ${JSON.stringify(version)}, this ds-analyzer reads ${reads}: ` +
    "re-run 'ds-analyzer profile'",
  malformed: (path: string, at: string, why: string) =>
    `profile '${path}' is malformed at '${at}': ${why}; re-run 'ds-analyzer profile'`,
  diskFull: (dir: string, file: string) =>
    `no space left on the device of ${dir} to write the profile ${file}: ${DISK_FULL_FIX}`,
  diskFullAfterCut: (dir: string, file: string, freedBytes: number) =>
    `no space left on the device of ${dir} to write the profile ${file}, ` +
    "even after cutting the job's logs to their tails " +
    `(${formatBytes(freedBytes)} freed): ${DISK_FULL_FIX}`,
  /** The warning a profile carries when its write cut the job's logs to make room. */
  logsCut: (runs: number, dir: string, keptBytesPerLog: number, freedBytes: number) =>
    'the disk was full when the profile was written: ' +
    `the job's logs of ${runs} run(s) in ${dir} were cut to their last ` +
    `${formatBytes(keptBytesPerLog)} each, freeing ${formatBytes(freedBytes)}`,
} as const;
