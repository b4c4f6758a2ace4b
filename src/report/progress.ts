import type { ModeProgress } from '../profile/run-mode.js';

/** Live progress of a mode: one rewritten line on a TTY, a plain line every few seconds otherwise. */
export function createProgress(write: (text: string) => void, isTTY: boolean) {
  let lastPlainAt = 0;
  let lineOpen = false;
  const describe = (p: ModeProgress): string => {
    const precision = p.relativePrecision === null ? 'CI —' : `CI ±${(p.relativePrecision * 100).toFixed(1)}%`;
    const median = p.medianIterMs === null ? '' : `  median ${p.medianIterMs.toFixed(1)} ms`;
    const rate = p.iterations > 0 ? p.elapsedSec / p.iterations : null;
    const eta = rate === null ? '' : `  ETA ≤ ${Math.ceil((p.maxIterations - p.iterations) * rate)}s`;
    const later = p.laterBlocksSec === undefined ? '' : `  then ~${Math.ceil(p.laterBlocksSec)}s for the other modes`;
    return `${(p.label ?? p.mode).padEnd(9)} iter ${p.iterations}/${p.maxIterations}${median}  ${precision}${eta}${later}`;
  };
  return {
    update(p: ModeProgress): void {
      if (isTTY) {
        write(`\r\x1b[K${describe(p)}`);
        lineOpen = true;
      } else if (Date.now() - lastPlainAt >= 5000) {
        lastPlainAt = Date.now();
        write(`${describe(p)}\n`);
      }
    },
    /** Prints a line of its own, closing a rewritten progress line first. */
    line(text: string): void {
      if (lineOpen) write('\r\x1b[K');
      lineOpen = false;
      write(`${text}\n`);
    },
  };
}
