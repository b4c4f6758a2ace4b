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

/** The width a line of advice, a verdict or a caveat keeps to on a terminal: details go on the lines after. */
export const LINE_WIDTH = 120;

/**
 * `text` after `first` (a label or bullet) and a space, wrapped at spaces into lines of at most `width`
 * characters, each line after the first indented by `rest`. A word longer than a line (a path) is kept whole.
 */
export function wrapLine(first: string, text: string, rest: string, width = LINE_WIDTH): string[] {
  const lines: string[] = [];
  let line = first;
  let words = 0;
  for (const word of text.split(' ')) {
    if (words > 0 && line.length + 1 + word.length > width) {
      lines.push(line);
      line = rest + word;
    } else {
      line += ' ' + word;
    }
    words += 1;
  }
  lines.push(line);
  return lines;
}

/** A name from a file (a job's name) on one terminal line: control characters out, at most 120 characters. */
export function oneLine(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it keeps off the terminal
  return text.replace(/[\u0000-\u001f\u007f]/g, ' ').slice(0, 120);
}
