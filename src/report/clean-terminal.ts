import type { CleanResult } from '../clean/run-clean.js';
import { CLEAN_TEXT } from '../clean/clean-text.js';

/** What `ds-analyzer clean` prints: one line per thing found, what was done (or, in a dry run, would be). */
export function renderClean(result: CleanResult): string {
  const lines = result.items.map((item) => item.text);
  if (result.dryRun) lines.push(CLEAN_TEXT.dryRun);
  return lines.join('\n') + '\n';
}
