// Page-cache operations against the plainest possible yardstick: one sequential
// reader of the same files from a cold cache, measured in the same run, so the
// ratios hold on any disk. Prints absolute MB/s too.
//
//   node dist/bench/page-cache.bench.js
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { evict, pageCacheSupport, residency, warm } from '../src/system/page-cache/page-cache.js';

const MiB = 1024 * 1024;
const FILES = 50;
const FILE_BYTES = 4 * MiB;
const ROUNDS = 3;

/** Runs the benchmark on ~200 MB of temp files and prints one line per operation. */
export async function bench(): Promise<void> {
  const support = pageCacheSupport();
  if (!support.evict || !support.residency) {
    console.log(`page-cache bench skipped: ${support.reason}`);
    return;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsa-bench-page-cache-'));
  try {
    const files = writeFiles(dir);
    const totalBytes = FILES * FILE_BYTES;
    await evict(files, { sync: true });

    const samples = {
      sequential: [] as number[],
      warm: [] as number[],
      evict: [] as number[],
      residency: [] as number[],
    };
    for (let round = 0; round < ROUNDS; round++) {
      await evict(files, { sync: false });
      samples.sequential.push(timeSequentialRead(files));

      await evict(files, { sync: false });
      const warmed = await warm(files, { concurrency: 8 });
      samples.warm.push(warmed.elapsedMs);

      // Everything is resident now: the worst case for residency, the real work for evict.
      const started = performance.now();
      const resident = await residency(files);
      samples.residency.push(performance.now() - started);
      if (resident.fraction < 0.9)
        console.log(`  note: only ${(resident.fraction * 100).toFixed(0)}% resident after warm`);

      const evicted = await evict(files, { sync: false });
      samples.evict.push(evicted.elapsedMs);
    }

    const mbPerSec = (ms: number): number => totalBytes / 1e6 / (ms / 1000);
    const sequential = mbPerSec(median(samples.sequential));
    console.log(`page cache: ${FILES} files x ${FILE_BYTES / MiB} MiB, median of ${ROUNDS} rounds`);
    console.log(`  sequential cold read   ${sequential.toFixed(0).padStart(8)} MB/s   1.00x (baseline)`);
    for (const name of ['warm', 'evict', 'residency'] as const) {
      const rate = mbPerSec(median(samples[name]));
      const label = { warm: 'warm (8 readers)', evict: 'evict (fadvise)', residency: 'residency (mincore)' }[name];
      console.log(
        `  ${label.padEnd(22)} ${rate.toFixed(0).padStart(8)} MB/s ${(rate / sequential).toFixed(2).padStart(6)}x`,
      );
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function writeFiles(dir: string): { path: string }[] {
  const block = randomBytes(MiB);
  return Array.from({ length: FILES }, (_, index) => {
    const file = path.join(dir, `shard-${index}.bin`);
    const fd = fs.openSync(file, 'w');
    for (let written = 0; written < FILE_BYTES; written += MiB) fs.writeSync(fd, block);
    fs.closeSync(fd);
    return { path: file };
  });
}

// One reader, one 1 MiB buffer, file after file: what a naive loader does.
function timeSequentialRead(files: { path: string }[]): number {
  const buffer = Buffer.allocUnsafe(MiB);
  const started = performance.now();
  for (const file of files) {
    const fd = fs.openSync(file.path, 'r');
    while (fs.readSync(fd, buffer, 0, buffer.length, null) > 0);
    fs.closeSync(fd);
  }
  return performance.now() - started;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await bench();
}
