/**
 * The history gate's verdict for a terminal: each series as a sparkline with its steps marked beneath, each step named
 * by the profile where it began, and the verdict with its exit code.
 */
import type { ChangePoint } from '../compare/change-points.js';
import { type HistorySeries, type HistoryVerdict, RECENT_PROFILES } from '../gate/history.js';

const BARS = '▁▂▃▄▅▆▇█';

/** One character a value, from ▁ (the series' least) to █ (its most). */
export function sparkline(values: readonly number[]): string {
  const low = Math.min(...values);
  const span = Math.max(...values) - low;
  return values.map((v) => BARS[span > 0 ? Math.round(((v - low) / span) * (BARS.length - 1)) : 0]).join('');
}

/** A line as long as the series with '^' under the first profile of each step. */
export function stepMarks(length: number, changes: readonly ChangePoint[]): string {
  const marks = new Array<string>(length).fill(' ');
  for (const c of changes) marks[c.index] = '^';
  return marks.join('').trimEnd();
}

function signed(fraction: number | null): string {
  if (fraction === null) return '—';
  return `${fraction >= 0 ? '+' : ''}${(fraction * 100).toFixed(1)}%`;
}

function seriesLines(s: HistorySeries, verdict: HistoryVerdict): string[] {
  const label = `${s.name} (ms/sample)`.padEnd(28);
  const lines = [`${label}${sparkline(s.values)}`];
  if (s.changes.length === 0) lines.push('  no step found');
  else lines.push(`${' '.repeat(28)}${stepMarks(s.values.length, s.changes)}`);
  for (const c of s.changes) {
    const at = verdict.points[c.index];
    lines.push(
      `  step at ${at.file} (${at.createdAt}): median ${c.before.toFixed(3)} → ${c.after.toFixed(3)} ` +
        `(${signed(c.relative)}), p = ${c.pValue.toFixed(3)}`,
    );
  }
  return lines;
}

/** The whole verdict, ending in the line that says the exit code. */
export function renderHistory(verdict: HistoryVerdict, dir: string): string {
  const { points, failing } = verdict;
  const head = `gate ${failing ? 'FAILED' : 'PASSED'}: history of ${points.length} profiles in ${dir}, ${points[0].createdAt} to ${points.at(-1)!.createdAt}`;
  const lines = [head, '', ...verdict.series.flatMap((s) => [...seriesLines(s, verdict), ''])];
  lines.push(
    `Steps by E-divisive means (permutation test at p = ${verdict.pValue}).`,
    'Profiles record no commit: each step is named by its file and its recorded time.',
  );
  const budget = `the ${(verdict.maxRegression * 100).toFixed(1)}% budget`;
  if (failing) {
    lines.push(
      `FAIL: the iteration time stepped ${signed(failing.relative)} at ${points[failing.index].file}, ` +
        `beyond ${budget}, among the newest ${RECENT_PROFILES} profiles: exit 1`,
    );
  } else {
    lines.push(`pass: no slowdown beyond ${budget} began among the newest ${RECENT_PROFILES} profiles: exit 0`);
  }
  return lines.join('\n') + '\n';
}
