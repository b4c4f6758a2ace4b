import { resolve } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import { HISTORY_TEXT } from '../gate/history-text.js';
import { prepareGate, withLaterEpochs, type RawGateFlags } from '../gate/options.js';
import { runGate } from './run-gate.js';
import { loadProfile, newestProfile } from '../store/profile-files.js';
import type { Io } from './io.js';

/** Options of `gate` as commander hands them over. */
export interface RawGateOptions extends RawGateFlags {
  profilesDir: string;
  history?: string;
  chart?: string;
}

/** What `gate` does once commander has parsed its flags: the verdict on the profile, printed, as an exit code. */
export async function gateAction(profileArg: string | undefined, raw: RawGateOptions, io: Io): Promise<number> {
  if (raw.history !== undefined) {
    const { gateHistoryAction } = await import('./gate-history-action.js');
    return gateHistoryAction(raw.history, profileArg, raw, io);
  }
  if (raw.chart !== undefined) throw new UserError(HISTORY_TEXT.chartWithoutHistory, ExitCode.Usage);
  const options = await prepareGate(raw, io.cwd);
  const profilePath = profileArg ? resolve(io.cwd, profileArg) : newestProfile(resolve(io.cwd, raw.profilesDir));
  const profile = await withLaterEpochs(await loadProfile(profilePath), options.epochs);
  const baseline = options.baselinePath
    ? await withLaterEpochs(await loadProfile(options.baselinePath), options.epochs)
    : null;
  return runGate(profile, profileArg ?? profilePath, options, io, baseline);
}
