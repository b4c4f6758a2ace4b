/**
 * The gate verdict as GitHub-flavoured Markdown for $GITHUB_STEP_SUMMARY (appended, as GitHub expects several steps to
 * share the file).
 */
import type { GateVerdict } from '../gate/rules.js';
import { mdText } from './escape.js';
import { EPOCHS_WORD } from './gate-terminal.js';

const ICON = { pass: '✅ pass', fail: '❌ **fail**', warn: '⚠️ warn' } as const;

/** Markdown of a verdict: heading, one table row per rule, notes. */
export function stepSummaryMarkdown(verdict: GateVerdict, profilePath: string, baselinePath: string | null): string {
  const status = verdict.exitCode === 0 ? '✅ passed' : verdict.jobFailure ? '❌ the job failed' : '❌ failed';
  const out = [
    `### ds-analyzer gate ${status}: ${mdText(verdict.jobName)}`,
    '',
    `Profile \`${mdCode(profilePath)}\`${baselinePath ? `, baseline \`${mdCode(baselinePath)}\`` : ''}.`,
    '',
    '| rule | of | level | expected | actual | result |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  for (const rule of verdict.rules) {
    out.push(
      `| ${rule.name} | ${EPOCHS_WORD[rule.judges]} | ${rule.level} | ${mdText(rule.expected)} | ${mdText(rule.actual)} | ${ICON[rule.result]} |`,
    );
  }
  const notes = verdict.rules.filter((r) => r.note);
  if (notes.length || verdict.jobFailure) out.push('');
  for (const rule of notes) out.push(`- **${rule.name}**: ${mdText(rule.note!)}`);
  if (verdict.jobFailure) out.push(`- **job**: ${mdText(verdict.jobFailure)}`);
  out.push('');
  return out.join('\n') + '\n';
}

/**
 * `text` inside a code span: without backticks (\u0060, written so that no reader takes it for a template) or line
 * ends.
 */
function mdCode(text: string): string {
  return text.replace(/[\u0060\r\n]/g, '');
}
