import type { DownloadProgress } from '../profile/data-sources/data-source.js';
import type { ModeProgress } from '../profile/run-mode.js';
import { formatBytes, formatRate } from '../units.js';

/** A plain line of progress (not a TTY) at most this often. */
const PLAIN_EVERY_MS = 5000;

/** A download's lines: what it will fetch at its start, where it is while it runs, what it took at its end. */
function describeDownload(p: DownloadProgress): string {
  const total = `${formatBytes(p.bytesTotal)} (${p.objects} object${p.objects === 1 ? '' : 's'})`;
  if (p.phase === 'start') {
    const estimate = p.estimateSec === null ? '' : `, about ${Math.ceil(p.estimateSec)} s at the rate measured`;
    return `local copy: downloading ${total} from ${p.source}${estimate}`;
  }
  const rate = p.elapsedSec > 0 ? p.bytesDone / p.elapsedSec : 0;
  if (p.phase === 'done')
    return `local copy: ${total} downloaded in ${p.elapsedSec.toFixed(1)} s (${formatRate(rate)})`;
  const left = rate > 0 ? `  ETA ${Math.ceil((p.bytesTotal - p.bytesDone) / rate)}s` : '';
  return `download  ${formatBytes(p.bytesDone)}/${formatBytes(p.bytesTotal)}  ${formatRate(rate)}${left}`;
}

/** Live progress of a mode: one rewritten line on a TTY, a plain line every few seconds otherwise. */
export function createProgress(write: (text: string) => void, isTTY: boolean) {
  let lastPlainAt = 0;
  let lastDownloadAt = 0;
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
      } else if (Date.now() - lastPlainAt >= PLAIN_EVERY_MS) {
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
    /** A download: its start and end on lines of their own, its progress as a mode's is. */
    download(p: DownloadProgress): void {
      if (p.phase !== 'running') {
        this.line(describeDownload(p));
        lastDownloadAt = Date.now();
      } else if (isTTY) {
        write(`\r\x1b[K${describeDownload(p)}`);
        lineOpen = true;
      } else if (Date.now() - lastDownloadAt >= PLAIN_EVERY_MS) {
        lastDownloadAt = Date.now();
        write(`${describeDownload(p)}\n`);
      }
    },
  };
}
