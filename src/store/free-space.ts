import { closeSync, openSync, readSync, statSync, writeFileSync } from 'node:fs';
import { filesUnder } from './files-under.js';

/** Bytes kept at the end of each job log when a full disk forces a cut: the tail is what explains a failure. */
export const KEPT_LOG_BYTES = 64 * 1024;

/** What cutting the logs did. */
export interface TruncatedLogs {
  /** Log files that were cut. */
  files: number;
  /** Bytes freed, summed over them. */
  freedBytes: number;
  /** Bytes kept at the end of each. */
  keptBytesPerLog: number;
}

/**
 * Cuts every job log (*.log) under `dir` to its last `keepBytes` from a line boundary, behind a line saying so; between
 * runs only (a job writing would write past the cut). Events files, the measurements, are left whole.
 */
export function truncateLogs(dir: string, keepBytes = KEPT_LOG_BYTES): TruncatedLogs {
  const result: TruncatedLogs = { files: 0, freedBytes: 0, keptBytesPerLog: keepBytes };
  for (const file of filesUnder(dir).filter((path) => path.endsWith('.log'))) {
    const size = statSync(file).size;
    // A log cut before is its tail plus a header: cutting it again would free nothing.
    if (size <= keepBytes + 256) continue;
    const tail = readTail(file, size, keepBytes);
    const fromLine = tail.indexOf(0x0a) + 1;
    const kept = fromLine > 0 && fromLine < tail.length ? tail.subarray(fromLine) : tail;
    const header = Buffer.from(
      `[ds-analyzer: the first ${size - kept.length} bytes of this log were cut because the disk was full]\n`,
    );
    // Opening with 'w' truncates first, which frees the room the tail is written back into.
    writeFileSync(file, Buffer.concat([header, kept]));
    result.files++;
    result.freedBytes += size - header.length - kept.length;
  }
  return result;
}

/** The last `bytes` of a file of `size` bytes. */
function readTail(file: string, size: number, bytes: number): Buffer {
  const buffer = Buffer.alloc(bytes);
  const fd = openSync(file, 'r');
  try {
    const read = readSync(fd, buffer, 0, bytes, size - bytes);
    return buffer.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}
