import type { FigureDiff, ProfileComparison } from '../compare/diff.js';
import { oneLine, table } from './format.js';
import { formatNumber } from '../units.js';

const VERDICT_WORD = {
  worse: 'worse (beyond noise)',
  better: 'better (beyond noise)',
  same: 'within noise',
  unknown: 'no CI',
} as const;

/** The comparison as a terminal table: figure, A, B, change, verdict. */
export function renderComparison(cmp: ProfileComparison, pathA: string, pathB: string): string {
  const out = [
    `A: ${oneLine(cmp.a.jobName)} (${pathA}, ${cmp.a.createdAt})`,
    `B: ${oneLine(cmp.b.jobName)} (${pathB}, ${cmp.b.createdAt})`,
    ...differencesText(cmp.differences),
    '',
  ];
  const rows = [['figure', 'unit', 'A', 'B', 'change', 'verdict']];
  let group = '';
  for (const f of cmp.figures) {
    if (!f.a && !f.b) continue;
    const label = f.group === group ? `  ${f.name}` : `${f.group}: ${f.name}`;
    group = f.group;
    rows.push([
      label,
      unitText(f.unit),
      value(f.a, f.unit),
      value(f.b, f.unit),
      changeText(f),
      f.a && f.b ? VERDICT_WORD[f.verdict] : '—',
    ]);
  }
  out.push(table(rows, [2, 3, 4]));
  out.push('');
  out.push(
    `${cmp.worse} figure(s) worse and ${cmp.better} better beyond the noise of both profiles (95% intervals); ` +
      `'~' marks figures built on an unproven mode.`,
  );
  return out.join('\n') + '\n';
}

/** A note that the two are not runs of one job (or not under the same settings), with each difference. */
function differencesText(differences: readonly string[]): string[] {
  if (differences.length === 0) return [];
  return [
    'note: A and B are not the same job under the same settings, so a change below may be the difference itself:',
    ...differences.map((d) => `  ${oneLine(d)}`),
  ];
}

function unitText(unit: FigureDiff['unit']): string {
  return unit === 'share' ? '% of iter' : unit;
}

function scaled(v: number, unit: FigureDiff['unit']): number {
  return unit === 'share' ? v * 100 : v;
}

function value(e: FigureDiff['a'], unit: FigureDiff['unit']): string {
  if (!e) return '—';
  const digits = Math.abs(scaled(e.mean, unit)) < 20 ? 2 : 1;
  return `${e.proven ? '' : '~'}${formatNumber(scaled(e.mean, unit), digits)}${e.halfWidth === null ? '' : ` ± ${formatNumber(scaled(e.halfWidth, unit), digits)}`}`;
}

function changeText(f: FigureDiff): string {
  if (!f.change) return '—';
  const d = scaled(f.change.delta, f.unit);
  const sign = d >= 0 ? '+' : '−';
  const rel =
    f.change.relative === null || f.unit === 'share'
      ? ''
      : ` (${f.change.relative >= 0 ? '+' : '−'}${formatNumber(Math.abs(f.change.relative) * 100, 0)}%)`;
  return `${sign}${formatNumber(Math.abs(d), Math.abs(d) < 20 ? 2 : 1)}${f.unit === 'share' ? ' pp' : ''}${rel}`;
}
