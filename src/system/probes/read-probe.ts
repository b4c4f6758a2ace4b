// A short, bounded probe of the dataset's storage bandwidth: files evicted, then read whole by `concurrency` readers,
// as loader workers do, the bytes from storage counted by this process's read_bytes.
import { open } from 'node:fs/promises';
import { evict, type FileRef } from '../page-cache/page-cache.js';
import { selfReadBytes } from '../kernel/proc.js';
import type { StorageProbe } from '../../schema/profile-run.js';

/** Bounds of one probe. */
export interface ReadProbeLimits {
  /** Readers at once (the job's loader workers, all ranks; at least 1). */
  concurrency: number;
  /** Stop after this many bytes read. */
  maxBytes: number;
  /** Stop starting new files after this long, s. */
  maxSec: number;
  /** Bytes per read request (a whole-file read of up to this much at a time). */
  requestBytes: number;
}

/** What the probe measured: the profile's storageProbe before its proof (StorageProbeSchema). */
export type ReadProbeResult = Omit<StorageProbe, 'proven' | 'reason'>;

/** Reads `files` (evicted first) within `limits`; evicts them again after, so no mode inherits them cached. */
export async function probeReads(files: readonly FileRef[], limits: ReadProbeLimits): Promise<ReadProbeResult> {
  await evict(files, { sync: false });
  const before = selfReadBytes();
  const started = performance.now();
  const deadline = started + limits.maxSec * 1000;
  let next = 0;
  let bytesRead = 0;
  let done = 0;
  const reader = async (): Promise<void> => {
    const buffer = Buffer.allocUnsafe(limits.requestBytes);
    while (next < files.length && bytesRead < limits.maxBytes && performance.now() < deadline) {
      const file = files[next++];
      const handle = await open(file.path, 'r').catch(() => null);
      if (handle === null) continue;
      try {
        for (;;) {
          const { bytesRead: n } = await handle.read(buffer, 0, buffer.length, null);
          if (n === 0) break;
          bytesRead += n;
        }
        done++;
      } finally {
        await handle.close();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, limits.concurrency) }, reader));
  const sec = (performance.now() - started) / 1000;
  const after = selfReadBytes();
  const storageBytes = before === null || after === null ? null : Math.max(0, after - before);
  await evict(files.slice(0, next), { sync: false });
  return {
    bytesRead,
    storageBytes,
    files: done,
    sec,
    bytesPerSec: sec > 0 ? (storageBytes ?? bytesRead) / sec : 0,
    concurrency: Math.max(1, limits.concurrency),
    requestBytes: limits.requestBytes,
  };
}
