// The gate's verdict on a terminal: the table of rules and the outcome line.
import type { GateVerdict } from '../gate/rules.js';
import { oneLine, table } from './format.js';

const RESULT_WORD = { pass: 'pass', fail: 'FAIL', warn: 'WARN' } as const;

/** Which epochs a rule judged, in the table's words. */
export const EPOCHS_WORD = { 'first-epoch': 'first epoch', 'later-epochs': 'epochs 2+' } as const;

/** The one-screen verdict: a row per rule (expected, actual, result), notes, and the outcome. */
export function renderVerdict(verdict: GateVerdict, profilePath: string, baselinePath: string | null): string {
  const out: string[] = [];
  const status = verdict.exitCode === 0 ? 'PASSED' : verdict.jobFailure ? 'JOB FAILED' : 'FAILED';
  out.push(
    `gate ${status}: ${oneLine(verdict.jobName)} (${profilePath}${baselinePath ? `, baseline ${baselinePath}` : ''})`,
  );
  const rows = [['rule', 'of', 'level', 'expected', 'actual', 'result']];
  for (const rule of verdict.rules)
    rows.push([rule.name, EPOCHS_WORD[rule.judges], rule.level, rule.expected, rule.actual, RESULT_WORD[rule.result]]);
  out.push(table(rows));
  const notes = verdict.rules.filter((r) => r.note);
  for (const rule of notes) out.push(`  ${rule.name}: ${rule.note}`);
  if (verdict.jobFailure) out.push(`  ${verdict.jobFailure}`);
  out.push(outcomeLine(verdict));
  return out.join('\n') + '\n';
}

/** '2 of 5 rules failed, 1 warning: exit 1'. */
export function outcomeLine(verdict: GateVerdict): string {
  const parts = [
    verdict.failed
      ? `${verdict.failed} of ${verdict.rules.length} rules failed`
      : `${verdict.rules.length - verdict.warned} of ${verdict.rules.length} rules passed`,
  ];
  if (verdict.warned) parts.push(`${verdict.warned} warning${verdict.warned > 1 ? 's' : ''}`);
  if (verdict.jobFailure) parts.push('the job failed');
  return `${parts.join(', ')}: exit ${verdict.exitCode}`;
}
