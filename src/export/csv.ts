/**
 * The iteration rows as CSV (RFC 4180): a header of ITERATION_COLUMNS, then a line a row, so that
 * `pandas.read_csv(path)` loads it with the right types: an unknown value (no epoch, no bytes) is an empty field, flags
 * are true/false.
 */
import { ITERATION_COLUMNS, type IterationRow } from './iteration-rows.js';

/** The CSV text of `rows`, ending in a newline. */
export function iterationsCsv(rows: readonly IterationRow[]): string {
  const lines = [ITERATION_COLUMNS.join(',')];
  for (const row of rows) lines.push(ITERATION_COLUMNS.map((column) => csvField(row[column])).join(','));
  return `${lines.join('\n')}\n`;
}

function csvField(value: string | number | boolean | null): string {
  if (value === null) return '';
  if (typeof value !== 'string') return String(value);
  return /[",\n\r]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}
