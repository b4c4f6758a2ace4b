import { resolve } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import { optionFlag } from '../gate/config.js';
import { HISTORY_TEXT } from '../gate/history-text.js';
import { judgeHistory, loadHistory, type HistoryVerdict } from '../gate/history.js';
import { HISTORY_OUTPUT_VERSION } from '../schema/versions.js';
import { writeAtomic } from '../store/write-atomic.js';
import { BUDGET_FLAG_KEYS, type RawGateFlags } from '../gate/options.js';
import { renderHistory } from '../report/history-terminal.js';
import { parseFraction } from '../units.js';
import type { Io } from './io.js';

/** Flags that judge one profile, not a history: given with --history they are refused, not ignored. */
const ONE_PROFILE_FLAGS: (keyof RawGateFlags)[] = [
  'config',
  'baseline',
  'junit',
  'epochs',
  ...BUDGET_FLAG_KEYS.filter((key) => key !== 'maxRegression'),
];

/** `gate --history DIR`: the steps in main's profiles, the series drawn, the newest slowdown judged. */
export async function gateHistoryAction(
  dir: string,
  profileArg: string | undefined,
  raw: RawGateFlags & { chart?: string },
  io: Io,
): Promise<number> {
  const others = ONE_PROFILE_FLAGS.filter((key) => raw[key] !== undefined).map(optionFlag);
  if (profileArg !== undefined) others.unshift(`a profile ('${profileArg}')`);
  if (others.length > 0) throw new UserError(HISTORY_TEXT.withOthers(others.join(', ')), ExitCode.Usage);
  const maxRegression = raw.maxRegression === undefined ? 0.05 : parseFraction(raw.maxRegression, '--max-regression');
  const points = await loadHistory(resolve(io.cwd, dir), io.stderr);
  const verdict = judgeHistory(points, maxRegression);
  const json = { schemaVersion: HISTORY_OUTPUT_VERSION, kind: 'gate-history', history: dir, ...verdict };
  io.stdout(raw.json ? JSON.stringify(json, null, 1) + '\n' : renderHistory(verdict, dir));
  if (raw.chart !== undefined) await writeChart(resolve(io.cwd, raw.chart), verdict);
  return verdict.exitCode;
}

/** The PNG of the series (Chart.js and the canvas loaded only then); an unwritable path is a one-line error, exit 8. */
async function writeChart(path: string, verdict: HistoryVerdict): Promise<void> {
  const { historyChartPng } = await import('../report/history-chart.js');
  const png = await historyChartPng(verdict);
  try {
    writeAtomic(path, png);
  } catch (error) {
    throw new UserError(HISTORY_TEXT.chartUnwritable(path, (error as Error).message), ExitCode.Environment);
  }
}
