/**
 * The verdict of gate --against: the regression rule judged on the paired rounds (paired.ts), in the gate's own verdict
 * shape, so that the terminal, JSON, JUnit and step-summary renderers serve it as they serve one profile.
 */
import { ExitCode } from '../errors.js';
import { formatNumber } from '../units.js';
import { AGAINST_TEXT } from './against-text.js';
import type { Budget } from './config.js';
import { judgePaired, pairedChange, type PairedChange, type RoundPace } from './paired.js';
import { pct, signedPct, type GateVerdict, type RuleOutcome } from './rules.js';

/** What the rounds left: their paces in run order, and why any round gave none. */
export interface AgainstRounds {
  /** The measured rounds, in run order. */
  rounds: RoundPace[];
  /** Rounds whose cache state was not proven: the pace is of the same state for both versions, said in the note. */
  unproven: number;
  /** Set when a round's job failed or gave no pace: the verdict is then that failure. */
  failure: string | null;
}

/** The gate's verdict on the paired rounds against the regression budget. */
export function againstVerdict(
  jobName: string,
  budget: Budget,
  measured: AgainstRounds,
  mode: 'cold' | 'cached' = 'cold',
): GateVerdict {
  const base = {
    id: 'regression' as const,
    name: 'regression (A/B in one run)',
    level: budget.level,
    limit: budget.limit,
    source: budget.source,
    judges: mode === 'cold' ? ('first-epoch' as const) : ('later-epochs' as const),
    expected: `≤ +${pct(budget.limit)} iteration time`,
  };
  if (measured.failure !== null) {
    const rule: RuleOutcome = { ...base, result: 'fail', actual: '—', value: null, note: measured.failure };
    return { jobName, rules: [rule], failed: 1, warned: 0, jobFailure: measured.failure, exitCode: ExitCode.JobFailed };
  }
  const change = pairedChange(measured.rounds);
  const judged = judgePaired(change, budget.limit);
  const held = judged !== 'fail';
  const notes = [
    AGAINST_TEXT.paces(
      meanPace(measured.rounds, 'reference'),
      meanPace(measured.rounds, 'candidate'),
      mode,
      change.pairs,
    ),
    AGAINST_TEXT.judged[judged](pct(budget.limit)),
    ...(measured.unproven > 0 ? [AGAINST_TEXT.unproven(measured.unproven, measured.rounds.length, mode)] : []),
  ];
  const rule: RuleOutcome = {
    ...base,
    result: held ? 'pass' : budget.level === 'error' ? 'fail' : 'warn',
    actual: changeText(change),
    value: change.relative,
    note: notes.join('; '),
  };
  const failed = rule.result === 'fail' ? 1 : 0;
  const warned = rule.result === 'warn' ? 1 : 0;
  return {
    jobName,
    rules: [rule],
    failed,
    warned,
    jobFailure: null,
    exitCode: failed ? ExitCode.GateFailed : ExitCode.Ok,
  };
}

/** A paired change with its interval, as the verdict writes it: +8.0% (95%: +6.1% to +9.9%). */
export function changeText(change: PairedChange): string {
  const interval =
    change.low === null || change.high === null ? '' : ` (95%: ${signedPct(change.low)} to ${signedPct(change.high)})`;
  return `${signedPct(change.relative)}${interval}`;
}

/** The geometric mean pace of one version's rounds, ms/sample (the mean the log ratios judge). */
function meanPace(rounds: readonly RoundPace[], arm: RoundPace['arm']): string {
  const logs = rounds.filter((r) => r.arm === arm).map((r) => Math.log(r.msPerSample));
  return formatNumber(Math.exp(logs.reduce((s, v) => s + v, 0) / logs.length), 3);
}
