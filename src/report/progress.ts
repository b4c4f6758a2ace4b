import type { DownloadProgress } from '../profile/data-sources/source-run.js';
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

/**
 * One rewritten line on a TTY, else a plain line at most every `everyMs` (each stream of updates timed apart);
 * `line` prints a line of its own, closing a rewritten one first, and with a stream restarts that stream's clock.
 */
export function liveLine(write: (text: string) => void, isTTY: boolean, everyMs: number) {
  const lastAt = new Map<string, number>();
  let lineOpen = false;
  return {
    show(text: string, stream = ''): void {
      if (isTTY) {
        write(`\r\x1b[K${text}`);
        lineOpen = true;
      } else if (Date.now() - (lastAt.get(stream) ?? 0) >= everyMs) {
        lastAt.set(stream, Date.now());
        write(`${text}\n`);
      }
    },
    line(text: string, stream?: string): void {
      if (lineOpen) write('\r\x1b[K');
      lineOpen = false;
      write(`${text}\n`);
      if (stream !== undefined) lastAt.set(stream, Date.now());
    },
  };
}

/** Live progress of a mode and of a download: one rewritten line on a TTY, a plain line every few seconds otherwise. */
export function createProgress(write: (text: string) => void, isTTY: boolean) {
  const live = liveLine(write, isTTY, PLAIN_EVERY_MS);
  const describe = (p: ModeProgress): string => {
    const precision = p.relativePrecision === null ? 'CI —' : `CI ±${(p.relativePrecision * 100).toFixed(1)}%`;
    const median = p.medianIterMs === null ? '' : `  median ${p.medianIterMs.toFixed(1)} ms`;
    const rate = p.iterations > 0 ? p.elapsedSec / p.iterations : null;
    const eta = rate === null ? '' : `  ETA ≤ ${Math.ceil((p.maxIterations - p.iterations) * rate)}s`;
    const later = p.laterBlocksSec === undefined ? '' : `  then ~${Math.ceil(p.laterBlocksSec)}s for the other modes`;
    return `${(p.label ?? p.mode).padEnd(9)} iter ${p.iterations}/${p.maxIterations}${median}  ${precision}${eta}${later}`;
  };
  return {
    update: (p: ModeProgress): void => live.show(describe(p)),
    /** Prints a line of its own, closing a rewritten progress line first. */
    line: (text: string): void => live.line(text),
    /** A download: its start and end on lines of their own, its progress as a mode's is. */
    download: (p: DownloadProgress): void =>
      p.phase === 'running' ? live.show(describeDownload(p), 'download') : live.line(describeDownload(p), 'download'),
  };
}
