// The storage probe after the modes, where no throttle fixed the bandwidth: a seeded sample of the files read cold at
// the job's concurrency, so the what-if knows the storage's capacity (src/system/probes/read-probe.ts).
import { mulberry32 } from '../random.js';
import type { Profile, StorageProbe } from '../schema/profile.js';
import { formatBytes, percent } from '../units.js';
import type { DatasetFile } from '../system/dataset/dataset.js';
import { probeReads, type ReadProbeLimits, type ReadProbeResult } from '../system/probes/read-probe.js';

/** Reads of the probe: the real one, or a test's. */
export type ReadProber = (files: readonly { path: string }[], limits: ReadProbeLimits) => Promise<ReadProbeResult>;

/** At most this much is read: enough to pass any drive's cache and readahead ramp, little next to a mode. */
const MAX_PROBE_BYTES = 256 * 1024 * 1024;
/** At most this long. */
const MAX_PROBE_SEC = 3;
// At most this many files are picked and evicted first (256 MiB of 1 KiB files was 262,144 files: 4 s to evict).
const MAX_PROBE_FILES = 32_768;
/** Node reads files on libuv's thread pool: 4 threads unless UV_THREADPOOL_SIZE says more. */
const READER_THREADS = Number(process.env.UV_THREADPOOL_SIZE) > 0 ? Number(process.env.UV_THREADPOOL_SIZE) : 4;
/** Storage must deliver this share of the bytes read for the files to have been cold. */
const COLD_SHARE = 0.9;

/** Runs the probe when it can tell something; null when the throttle or a missing cold mode makes it moot. */
export async function storageProbe(
  profile: Profile,
  files: readonly DatasetFile[],
  prober: ReadProber = probeReads,
): Promise<StorageProbe | null> {
  const cold = profile.modes.cold;
  if (profile.options.storageBwBytesPerSec !== null || !cold || files.length === 0) return null;
  const workers = cold.ranks.reduce((sum, r) => sum + Math.max(1, r.workers ?? 1), 0);
  const concurrency = Math.max(1, Math.min(workers, READER_THREADS));
  const sample = seededSample(files, MAX_PROBE_BYTES);
  const sizes = sample.map((f) => f.bytes).sort((a, b) => a - b);
  // A whole-file read asks for the file at once; the kernel splits it into readahead windows of its own.
  const requestBytes = Math.min(1 << 20, Math.max(64 * 1024, sizes[Math.floor(sizes.length / 2)] ?? 0));
  const result = await prober(sample, { concurrency, maxBytes: MAX_PROBE_BYTES, maxSec: MAX_PROBE_SEC, requestBytes });
  const share = result.storageBytes === null || result.bytesRead === 0 ? null : result.storageBytes / result.bytesRead;
  const proven = share !== null && share >= COLD_SHARE;
  const reason =
    share === null
      ? 'not proven: /proc/self/io read_bytes could not be read, so page-cache hits cannot be told from storage reads'
      : proven
        ? `storage delivered ${percent(share)} of the ${formatBytes(result.bytesRead)} read ` +
          `from ${result.files} evicted files`
        : `not proven: storage delivered only ${percent(share)} of the ${formatBytes(result.bytesRead)} read: ` +
          `the rest came from the page cache`;
  return { ...result, proven, reason };
}

/** Files of a seeded random order until `maxBytes` are covered, at most MAX_PROBE_FILES of them. */
function seededSample(files: readonly DatasetFile[], maxBytes: number): DatasetFile[] {
  const random = mulberry32(0x5eed);
  const order = Uint32Array.from({ length: files.length }, (_, k) => k);
  const out: DatasetFile[] = [];
  let bytes = 0;
  for (let k = 0; k < order.length && bytes < maxBytes && out.length < MAX_PROBE_FILES; k++) {
    const j = k + Math.floor(random() * (order.length - k));
    [order[k], order[j]] = [order[j], order[k]];
    const file = files[order[k]];
    if (file.bytes === 0) continue;
    out.push(file);
    bytes += file.bytes;
  }
  return out;
}
