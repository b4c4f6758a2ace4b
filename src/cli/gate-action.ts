import { resolve } from 'node:path';
import { prepareGate, runGate, type RawGateFlags } from '../gate/run-gate.js';
import { newestProfile, readProfile } from '../store/profile-store.js';
import type { Io } from './io.js';

/** Options of `gate` as commander hands them over. */
export interface RawGateOptions extends RawGateFlags {
  profilesDir: string;
}

/** What `gate` does once commander has parsed its flags: the verdict on the profile, printed, as an exit code. */
export function gateAction(profileArg: string | undefined, raw: RawGateOptions, io: Io): number {
  const options = prepareGate(raw, io.cwd);
  const profilePath = profileArg ? resolve(io.cwd, profileArg) : newestProfile(resolve(io.cwd, raw.profilesDir));
  return runGate(readProfile(profilePath), profileArg ?? profilePath, options, io);
}
