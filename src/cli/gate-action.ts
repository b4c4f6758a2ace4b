import { resolve } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import { optionFlag } from '../gate/config.js';
import { HISTORY_TEXT } from '../gate/history-text.js';
import { prepareGate, withLaterEpochs, type GateOptions, type RawGateFlags } from '../gate/options.js';
import { AGAINST_TEXT } from '../gate/against-text.js';
import { AGAINST_ONLY_FLAGS } from '../gate/against-defaults.js';
import { betweenRunSpread, type BetweenRuns } from '../gate/between-runs.js';
import { BETWEEN_RUNS_TEXT } from '../gate/between-runs-text.js';
import type { RawAgainstFlags } from './gate-against-action.js';
import { runGate } from './run-gate.js';
import { loadProfile, newestProfile } from '../store/profile-files.js';
import type { Io } from './io.js';

/** Options of `gate` as commander hands them over. */
export interface RawGateOptions extends RawGateFlags, RawAgainstFlags {
  profilesDir: string;
  history?: string;
  chart?: string;
  noiseHistory?: string;
}

/** What `gate` does once commander has parsed its flags: the verdict on the profile, printed, as an exit code. */
export async function gateAction(args: string[], raw: RawGateOptions, io: Io): Promise<number> {
  if (raw.against !== undefined) {
    const { gateAgainstAction } = await import('./gate-against-action.js');
    return gateAgainstAction(args, raw, io);
  }
  refuseAgainstFlags(raw);
  if (args.length > 1) throw new UserError(AGAINST_TEXT.extraProfiles(args.length), ExitCode.Usage);
  const profileArg = args[0];
  if (raw.history !== undefined) {
    if (raw.noiseHistory !== undefined) throw new UserError(BETWEEN_RUNS_TEXT.withHistory, ExitCode.Usage);
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
  const noise =
    raw.noiseHistory === undefined ? null : await betweenRunNoise(resolve(io.cwd, raw.noiseHistory), options, io);
  return runGate(profile, profileArg ?? profilePath, { ...options, betweenRuns: noise }, io, baseline);
}

/** --noise-history DIR: the spread between runs of main's stored profiles, for --baseline's regression. */
async function betweenRunNoise(dir: string, options: GateOptions, io: Io): Promise<BetweenRuns> {
  if (!options.baselinePath) throw new UserError(BETWEEN_RUNS_TEXT.withoutBaseline, ExitCode.Usage);
  if (options.epochs === 'later') throw new UserError(BETWEEN_RUNS_TEXT.laterEpochs, ExitCode.Usage);
  const { loadHistory } = await import('../gate/history.js');
  const points = await loadHistory(dir, io.stderr).catch((error: unknown) => {
    // The history's own messages name --history: here the folder came with --noise-history.
    if (error instanceof UserError)
      throw new UserError(error.message.replace('--history', '--noise-history'), error.exitCode);
    throw error;
  });
  const spread = betweenRunSpread(
    points.map((p) => p.msPerSample),
    dir,
  );
  if (!spread) throw new UserError(BETWEEN_RUNS_TEXT.tooFlat(dir), ExitCode.MissingInput);
  return spread;
}

/** Flags of --against (A/B in one run) given without it: refused, not ignored. */
function refuseAgainstFlags(raw: RawGateOptions): void {
  const given = AGAINST_ONLY_FLAGS.filter((key) => raw[key] !== undefined);
  if (given.length > 0) {
    const flags = given.map(optionFlag).join(', ');
    throw new UserError(AGAINST_TEXT.withoutAgainst(flags), ExitCode.Usage);
  }
}
