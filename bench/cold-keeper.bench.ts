// What keeping a dataset cold costs, the fanotify keeper (root) and the
// inotify keeper against the scanning one,
// at 3,000 files and at ImageNet's 1,280,000, with the proof that it worked.
//
// A reader child (cold-keeper-reader.ts) reads 1 KiB files at a steady pace
// over a working set it re-reads epoch after epoch, so every file read twice
// must be evicted between its reads. The keeper runs alone in this process
// while the reader runs: this process's CPU (process.cpuUsage) is the
// keeper's cost, set beside the keeper's own cpuSec. The proof is the
// reader's storage reads against what it consumed: a 1 KiB file read from
// storage costs a whole 4 KiB page, so the fraction of pages read is the
// figure that must stay >= 90% (the bytes fraction is printed too).
//
//   BENCH_KEEPER_FILES=3000 node dist/bench/cold-keeper.bench.js
//   env: BENCH_KEEPER_FILES (default 3000,1280000), BENCH_KEEPER_SEC (10),
//        BENCH_KEEPER_RATE (files/s, 1000), BENCH_KEEPER_SCAN_SEC (scan keeper
//        on the largest size, 5: it is known to take about a CPU)
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { startColdKeeper, type ColdKeeperStats } from '../src/system/keepers/cold-keeper.js';
import { loadLibc } from '../src/system/kernel/libc.js';
import { evict, pageCacheSupport, type FileRef } from '../src/system/page-cache/page-cache.js';

const FILE_BYTES = 1024;
const FILES_PER_DIR = 1280; // ImageNet: 1.28M images in 1,000 class folders
const run = promisify(execFile);

interface ReaderResult {
  reads: number;
  epochs: number;
  consumedBytes: number;
  storageReadBytes: number;
  wallSec: number;
}

/** Runs the comparison at each size and prints one line per configuration. */
export async function bench(): Promise<void> {
  const support = pageCacheSupport();
  const libc = loadLibc();
  if (!support.evict || !support.residency || !libc.ok) {
    console.log(`cold-keeper bench skipped: ${support.reason ?? 'libc unavailable'}`);
    return;
  }
  if (!fs.existsSync('/proc/self/io')) {
    console.log('cold-keeper bench skipped: /proc/self/io is not readable, so storage reads cannot be proven');
    return;
  }
  const sizes = (process.env.BENCH_KEEPER_FILES ?? '3000,1280000')
    .split(',')
    .map(Number)
    .filter((n) => n > 0);
  const seconds = Number(process.env.BENCH_KEEPER_SEC ?? 10);
  const rate = Number(process.env.BENCH_KEEPER_RATE ?? 1000);
  const scanSecondsLarge = Number(process.env.BENCH_KEEPER_SCAN_SEC ?? 5);
  const pageBytes = libc.libc.pageSizeBytes;
  for (const count of sizes) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsa-bench-cold-keeper-'));
    try {
      const generated = performance.now();
      const files = writeFiles(dir, count);
      libc.libc.sync();
      await evict(files, { sync: false });
      const dirs = Math.ceil(count / FILES_PER_DIR);
      console.log(
        `cold keeper: ${count.toLocaleString('en')} files x 1 KiB in ${dirs} dirs (written and evicted in ${((performance.now() - generated) / 1000).toFixed(0)} s); ` +
          `reader ${rate} files/s, re-reading its working set each epoch`,
      );
      const large = count > 100_000;
      const configs: { name: 'none' | 'fanotify' | 'inotify' | 'scan'; seconds: number }[] = [
        ...(large ? [] : [{ name: 'none' as const, seconds }]),
        // fanotify needs root; elsewhere the keeper would fall back and the line would say so.
        ...(process.geteuid?.() === 0 ? [{ name: 'fanotify' as const, seconds }] : []),
        { name: 'inotify', seconds },
        { name: 'scan', seconds: large ? scanSecondsLarge : seconds },
      ];
      for (const config of configs) {
        // Each file of the working set is read about twice: the second read must come from storage.
        const working = sample(files, Math.min(count, Math.max(1, Math.floor((rate * config.seconds) / 2))));
        await evict(working, { sync: false });
        const listFile = path.join(dir, 'reader-list.txt');
        fs.writeFileSync(listFile, working.map((f) => f.path).join('\n'));
        const keeper =
          config.name === 'none' ? null : startColdKeeper(files, { intervalMs: 100, mechanism: config.name });
        const cpuBefore = process.cpuUsage();
        let reader: ReaderResult;
        let stats: ColdKeeperStats | null = null;
        try {
          reader = await runReader(listFile, rate, config.seconds);
        } finally {
          // Stopped even when the reader fails: its watches and timers must not outlive the files.
          stats = keeper ? await keeper.stop() : null;
        }
        const cpu = process.cpuUsage(cpuBefore);
        fs.rmSync(listFile);
        console.log(line(config.name, stats, (cpu.user + cpu.system) / 1e6, reader, pageBytes));
      }
    } finally {
      const removing = performance.now();
      fs.rmSync(dir, { recursive: true, force: true });
      if (count > 100_000) console.log(`  (removed in ${((performance.now() - removing) / 1000).toFixed(0)} s)`);
    }
  }
}

function line(
  name: string,
  stats: ColdKeeperStats | null,
  processCpuSec: number,
  reader: ReaderResult,
  pageBytes: number,
): string {
  const pct = (x: number) => `${(x * 100).toFixed(x < 0.1 ? 2 : 1)}%`;
  const wall = reader.wallSec;
  const pagesConsumed = reader.reads * Math.ceil(FILE_BYTES / pageBytes) * pageBytes;
  const mechanism = stats
    ? `${stats.mechanism}${stats.fallbackReason ? ` (fell back: ${stats.fallbackReason})` : ''}`
    : 'no keeper';
  const perClose =
    stats?.events && stats.events.closeEvents > 0
      ? `, ${((stats.cpuSec / stats.events.closeEvents) * 1e6).toFixed(1)} us per close`
      : '';
  const pagesFromStorage = reader.storageReadBytes / pagesConsumed;
  // The proof: with a keeper, a re-read must come from storage (at least 90% of the pages).
  const proof = stats ? (pagesFromStorage >= 0.9 ? ' (kept cold)' : ' (NOT kept cold: below 90%)') : '';
  return (
    `  ${name.padEnd(8)} keeper ${pct((stats?.cpuSec ?? 0) / wall).padStart(6)} of a CPU (process ${pct(processCpuSec / wall)})${perClose}; ` +
    `from storage ${pct(pagesFromStorage)} of pages read${proof} (${pct(reader.storageReadBytes / reader.consumedBytes)} of bytes); ` +
    `${reader.reads} reads in ${reader.epochs} epochs over ${wall.toFixed(1)} s; ${mechanism}` +
    (stats
      ? `, setup ${stats.setupSec.toFixed(2)} s, ${stats.reEvictions} re-evictions, ${stats.sweeps} sweeps, ${stats.errors} errors`
      : '')
  );
}

// Sync writes in a tight loop: the fastest plain way to make a million small files.
export function writeFiles(dir: string, count: number): FileRef[] {
  const block = Buffer.alloc(FILE_BYTES, 7);
  const files: FileRef[] = [];
  for (let index = 0; index < count; index++) {
    const classDir = path.join(dir, `c${String(Math.floor(index / FILES_PER_DIR)).padStart(4, '0')}`);
    if (index % FILES_PER_DIR === 0) fs.mkdirSync(classDir);
    const file = path.join(classDir, `${index}.bin`);
    fs.writeFileSync(file, block);
    files.push({ path: file });
  }
  return files;
}

function sample(files: FileRef[], count: number): FileRef[] {
  const picked = [...files];
  for (let i = 0; i < count; i++) {
    const j = i + Math.floor(Math.random() * (picked.length - i));
    [picked[i], picked[j]] = [picked[j], picked[i]];
  }
  return picked.slice(0, count);
}

async function runReader(listFile: string, rate: number, seconds: number): Promise<ReaderResult> {
  const reader = fileURLToPath(new URL('./cold-keeper-reader.js', import.meta.url));
  const { stdout } = await run(process.execPath, [reader, listFile, String(rate), String(seconds)], {
    timeout: (seconds + 60) * 1000,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as ReaderResult;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await bench();
}
