// Ground truth for what-ifs of a job whose loader keeps up (issue 17): an
// unmodified DatasetFolder script whose "accelerator" sleeps 200 ms a batch
// (no CPU) and whose 2 loader workers have headroom, profiled once, then asked
// for a faster accelerator, fewer workers, fewer CPUs and (as root, where a
// blkio/io.max throttle can be set) no cache on slow storage. Each answer is
// set against the same script run at that setting without ds-analyzer, timed
// by its own meter; those runs go in mirrored order so the machine's drift
// cancels from each setting's mean. "No cache" is held by evicting the
// dataset's files every 200 ms while the script runs.
//
//   node dist/bench/headroom-truth.bench.js
//   env: BENCH_HEADROOM_PYTHON (default /usr/bin/python3)
//        BENCH_HEADROOM_KEEP=DIR keeps the profile and the measured runs there
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { writeClassFolders } from '../test/e2e/helpers.js';
import { listDataset } from '../src/system/dataset/dataset.js';
import { evict } from '../src/system/page-cache/page-cache.js';
import { createJobCgroup, wrapCommand } from '../src/system/cgroups/cgroups.js';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const CLI = path.join(repoRoot, 'bin/ds-analyzer.js');
const SCRIPT = path.join(repoRoot, 'test/fixtures/datasetfolder-train.py');
const PYTHON = process.env.BENCH_HEADROOM_PYTHON ?? '/usr/bin/python3';
const BATCH = 16;
const SLEEP_MS = 200;
const WORKERS = 2;

/** One question: the whatif flags, and how the script runs at that setting without the tool. */
interface Question {
  label: string;
  whatif: string[];
  workers: number;
  sleepMs: number;
  /** CPUs the script is pinned to (taskset); null: all. */
  cpus: number | null;
  /** Storage read throttle with the dataset kept evicted, bytes/s; absent: neither. */
  coldAtBytesPerSec?: number;
}

/** The slow storage of the storage question. */
const SLOW_STORAGE = 5_000_000;

const QUESTIONS: Question[] = [
  { label: 'as profiled', whatif: [], workers: WORKERS, sleepMs: SLEEP_MS, cpus: null },
  { label: '--workers 1', whatif: ['--workers', '1'], workers: 1, sleepMs: SLEEP_MS, cpus: null },
  { label: '--workers 0', whatif: ['--workers', '0'], workers: 0, sleepMs: SLEEP_MS, cpus: null },
  { label: '--cpus 1', whatif: ['--cpus', '1'], workers: WORKERS, sleepMs: SLEEP_MS, cpus: 1 },
  { label: '--gpu-speedup 4', whatif: ['--gpu-speedup', '4'], workers: WORKERS, sleepMs: SLEEP_MS / 4, cpus: null },
  { label: '--gpu-speedup 8', whatif: ['--gpu-speedup', '8'], workers: WORKERS, sleepMs: SLEEP_MS / 8, cpus: null },
  {
    label: '--gpu-speedup 8 --workers 1',
    whatif: ['--gpu-speedup', '8', '--workers', '1'],
    workers: 1,
    sleepMs: SLEEP_MS / 8,
    cpus: null,
  },
  {
    label: '--cache 0 --storage-bw 5MB/s',
    whatif: ['--cache', '0', '--storage-bw', '5MB/s'],
    workers: WORKERS,
    sleepMs: SLEEP_MS,
    cpus: null,
    coldAtBytesPerSec: SLOW_STORAGE,
  },
];

const jobArgs = (data: string, workers: number, sleepMs: number): string[] => [
  SCRIPT,
  data,
  '--workers',
  String(workers),
  '--batch',
  String(BATCH),
  '--work',
  '10',
  '--sleep-ms',
  String(sleepMs),
];

/** The script's own ms per iteration for each epoch after the first (which starts the workers). */
async function measure(data: string, q: Question): Promise<number[]> {
  const args = [...jobArgs(data, q.workers, q.sleepMs), '--epochs', '3', '--report'];
  let argv =
    q.cpus === null
      ? [PYTHON, ...args]
      : ['taskset', '-c', Array.from({ length: q.cpus }, (_, k) => k).join(','), PYTHON, ...args];
  const dataset = await listDataset([data]);
  const group =
    q.coldAtBytesPerSec === undefined
      ? null
      : await createJobCgroup({
          name: `bench-${process.pid}`,
          readBpsDevice: { device: dataset.device!, bytesPerSec: q.coldAtBytesPerSec },
        });
  if (group) argv = wrapCommand(group.procsFiles, argv);
  let evicting = q.coldAtBytesPerSec !== undefined;
  const keeper = (async () => {
    while (evicting) {
      await evict(dataset.files, { sync: false });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  const { stdout } = await run(argv[0], argv.slice(1), { maxBuffer: 1 << 20 }).finally(async () => {
    evicting = false;
    await keeper;
    await group?.remove();
  });
  const ms = [...stdout.matchAll(/^epoch (\d+): \d+ iterations, ([\d.]+) ms per iteration$/gm)]
    .filter((m) => m[1] !== '0')
    .map((m) => Number(m[2]));
  if (ms.length === 0)
    throw new Error(`the script printed no epoch times (${q.label}); its output ends: ${stdout.slice(-300)}`);
  return ms;
}

interface Answer {
  iterMs: number;
  range: [number, number] | null;
  bottleneck: string;
}

async function ask(profile: string, q: Question): Promise<Answer> {
  const { stdout } = await run(process.execPath, [CLI, 'whatif', profile, ...q.whatif, '--json'], {
    maxBuffer: 1 << 24,
  });
  const p = (
    JSON.parse(stdout) as {
      prediction: { iterMs: number; bottleneck: string; range?: { iterMs: { low: number; high: number } } };
    }
  ).prediction;
  return {
    iterMs: p.iterMs,
    range: p.range ? [p.range.iterMs.low, p.range.iterMs.high] : null,
    bottleneck: p.bottleneck,
  };
}

export async function bench(): Promise<void> {
  try {
    await run(PYTHON, ['-c', 'import torch, torchvision']);
  } catch {
    console.log(`headroom-truth bench skipped: needs ${PYTHON} with torch and torchvision`);
    return;
  }
  const keep = process.env.BENCH_HEADROOM_KEEP;
  const dir = keep ?? fs.mkdtempSync(path.join(os.tmpdir(), 'dsa-bench-headroom-'));
  const data = path.join(dir, 'data');
  const profile = path.join(dir, 'profile.json');
  const truthFile = path.join(dir, 'measured.json');
  try {
    if (!fs.existsSync(data)) writeClassFolders(data, { classes: 4, perClass: 128, fileBytes: 96 * 1024 });
    if (!fs.existsSync(profile)) {
      const profileArgs = ['--min-iterations', '30', '--max-iterations', '120', '--precision', '5%'];
      await run(
        process.execPath,
        [
          CLI,
          'profile',
          '--data',
          data,
          ...profileArgs,
          '--out',
          profile,
          '--',
          PYTHON,
          ...jobArgs(data, WORKERS, SLEEP_MS),
        ],
        { maxBuffer: 1 << 24 },
      );
    }
    const canThrottle = process.getuid?.() === 0 && (await listDataset([data])).device !== null;
    const questions = QUESTIONS.filter((q) => q.coldAtBytesPerSec === undefined || canThrottle);
    if (questions.length < QUESTIONS.length)
      console.log('  (the storage question needs root and a block device to throttle: left out)');
    let measured: Record<string, number[]>;
    if (fs.existsSync(truthFile)) measured = JSON.parse(fs.readFileSync(truthFile, 'utf8')) as Record<string, number[]>;
    else {
      measured = {};
      // Mirrored: each setting's two runs sit around the middle of the schedule.
      for (const q of [...questions, ...[...questions].reverse()])
        measured[q.label] = [...(measured[q.label] ?? []), ...(await measure(data, q))];
      if (keep) fs.writeFileSync(truthFile, JSON.stringify(measured));
    }
    console.log(
      `what-ifs of a job with loader headroom against the script without ds-analyzer (${os.cpus().length} CPUs; ${WORKERS} workers, ${SLEEP_MS} ms sleeping step; ms per iteration)`,
    );
    console.log(
      '  question                        predicted  range            bottleneck  measured without the tool  error',
    );
    for (const q of questions) {
      const a = await ask(profile, q);
      const runs = measured[q.label];
      if (!runs) continue;
      const mean = runs.reduce((s, x) => s + x, 0) / runs.length;
      const sd = Math.sqrt(runs.reduce((s, x) => s + (x - mean) ** 2, 0) / Math.max(1, runs.length - 1));
      const range = a.range ? `${a.range[0].toFixed(0)}-${a.range[1].toFixed(0)}` : '-';
      const inRange = a.range && mean >= a.range[0] && mean <= a.range[1] ? ' (in range)' : '';
      console.log(
        `  ${q.label.padEnd(30)}  ${a.iterMs.toFixed(1).padStart(9)}  ${range.padEnd(15)}  ${a.bottleneck.padEnd(10)}  ${`${mean.toFixed(1)} ± ${sd.toFixed(1)} (${runs.length} epochs)`.padEnd(25)}  ${(((a.iterMs - mean) / mean) * 100).toFixed(1).padStart(5)}%${inRange}`,
      );
    }
  } finally {
    if (!keep) fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await bench();
}
