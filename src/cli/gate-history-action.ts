import { resolve } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import { HISTORY_TEXT } from '../gate/history-text.js';
import { judgeHistory, loadHistory } from '../gate/history.js';
import type { RawGateFlags } from '../gate/options.js';
import { renderHistory } from '../report/history-terminal.js';
import { parseFraction } from '../units.js';
import type { Io } from './io.js';

/** Flags that judge one profile, not a history: given with --history they are refused, not ignored. */
const ONE_PROFILE_FLAGS: (keyof RawGateFlags)[] = [
  'config',
  'baseline',
  'junit',
  'epochs',
  'maxFetchStall',
  'maxPrepStall',
  'maxTotalStall',
  'minThroughput',
  'maxCheckpointStall',
  'maxTimeToFirstBatch',
];

const flagName = (key: string) => `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/** `gate --history DIR`: the steps in main's profiles, the series drawn, the newest slowdown judged. */
export async function gateHistoryAction(
  dir: string,
  profileArg: string | undefined,
  raw: RawGateFlags,
  io: Io,
): Promise<number> {
  const others = ONE_PROFILE_FLAGS.filter((key) => raw[key] !== undefined).map(flagName);
  if (profileArg !== undefined) others.unshift(`a profile ('${profileArg}')`);
  if (others.length > 0) throw new UserError(HISTORY_TEXT.withOthers(others.join(', ')), ExitCode.Usage);
  const maxRegression = raw.maxRegression === undefined ? 0.05 : parseFraction(raw.maxRegression, '--max-regression');
  const points = await loadHistory(resolve(io.cwd, dir), io.stderr);
  const verdict = judgeHistory(points, maxRegression);
  io.stdout(raw.json ? JSON.stringify({ history: dir, ...verdict }, null, 1) + '\n' : renderHistory(verdict, dir));
  return verdict.exitCode;
}
