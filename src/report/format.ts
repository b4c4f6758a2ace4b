import type { Estimate } from '../schema/profile.js';
import { percent } from '../units.js';

/** '12.3 ± 0.4' (95% CI half-width), with '~' marking a figure built on an unproven state. */
export function formatEstimate(estimate: Estimate | null, digits = 1): string {
  if (!estimate) return '—';
  const mark = estimate.proven ? '' : '~';
  const spread = estimate.halfWidth === null ? '' : ` ± ${estimate.halfWidth.toFixed(digits)}`;
  return `${mark}${estimate.mean.toFixed(digits)}${spread}`;
}

/** '42%' or '—'. */
export function formatPercent(fraction: number | null): string {
  return fraction === null ? '—' : percent(fraction, 0);
}

/** Left-aligned columns; the first row is the header. */
export function table(rows: string[][], rightAligned: number[] = []): string {
  const widths = rows[0].map((_, col) => Math.max(...rows.map((row) => (row[col] ?? '').length)));
  return rows
    .map((row) =>
      row
        .map((cell, col) => (rightAligned.includes(col) ? cell.padStart(widths[col]) : cell.padEnd(widths[col])))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
