// Ground truth for the num_workers what-if (issue 12): an unmodified
// DatasetFolder script whose loader workers set its pace (--work 10: CPU-heavy
// prep, its cost per sample in the profile's u), profiled at the script's own count (1 worker),
// then `whatif --workers N` against the same script run without ds-analyzer
// at N workers, timed by its own meter. The runs without the tool are
// interleaved in mirrored order (1, 2, 0, 0, 2, 1) so the machine's drift
// cancels from their means. A second profile adds `--workers 2` (a measured
// point) and its prediction is compared too.
//
//   node dist/bench/workers-truth.bench.js
//   env: BENCH_WORKERS_PYTHON (default /usr/bin/python3)
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { writeClassFolders } from '../test/e2e/helpers.js';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const CLI = path.join(repoRoot, 'bin/ds-analyzer.js');
const SCRIPT = path.join(repoRoot, 'test/fixtures/datasetfolder-train.py');
const PYTHON = process.env.BENCH_WORKERS_PYTHON ?? '/usr/bin/python3';
const BATCH = 16;
const JOB = (data: string, workers: number) => [
  SCRIPT,
  data,
  '--workers',
  String(workers),
  '--batch',
  String(BATCH),
  '--work',
  '10',
];

export async function bench(): Promise<void> {
  try {
    await run(PYTHON, ['-c', 'import torch, torchvision']);
  } catch {
    console.log(`workers-truth bench skipped: needs ${PYTHON} with torch and torchvision`);
    return;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsa-bench-workers-'));
  const data = path.join(dir, 'data');
  try {
    writeClassFolders(data, { classes: 4, perClass: 128, fileBytes: 96 * 1024 });
    const profileArgs = ['--min-iterations', '30', '--max-iterations', '160', '--precision', '10%'];
    const plain = path.join(dir, 'plain.json');
    const swept = path.join(dir, 'swept.json');
    await run(
      process.execPath,
      [CLI, 'profile', '--data', data, ...profileArgs, '--out', plain, '--', PYTHON, ...JOB(data, 1)],
      { maxBuffer: 1 << 24 },
    );
    await run(
      process.execPath,
      [CLI, 'profile', '--data', data, ...profileArgs, '--workers', '2', '--out', swept, '--', PYTHON, ...JOB(data, 1)],
      { maxBuffer: 1 << 24 },
    );

    const counts = [0, 1, 2];
    const predicted = async (profile: string, workers: number): Promise<number> => {
      const { stdout } = await run(process.execPath, [CLI, 'whatif', profile, '--workers', String(workers), '--json'], {
        maxBuffer: 1 << 24,
      });
      return (JSON.parse(stdout) as { prediction: { samplesPerSec: number } }).prediction.samplesPerSec;
    };
    const fromPlain = await Promise.all(counts.map((w) => predicted(plain, w)));
    const fromSwept = await Promise.all(counts.map((w) => predicted(swept, w)));

    // Without the tool, mirrored: each count's runs sit around the middle of the schedule.
    const order = [1, 2, 0, 0, 2, 1];
    const measured = new Map<number, number[]>();
    for (const workers of order) {
      const { stdout } = await run(PYTHON, [...JOB(data, workers), '--epochs', '5', '--report'], {
        maxBuffer: 1 << 20,
      });
      // Epoch 0 starts the workers and warms up: left out, as the profile leaves out its warm-up.
      const msPerIter = [...stdout.matchAll(/^epoch (\d+): \d+ iterations, ([\d.]+) ms per iteration$/gm)]
        .filter((m) => m[1] !== '0')
        .map((m) => Number(m[2]));
      if (msPerIter.length === 0)
        throw new Error(
          `the script printed no epoch times at ${workers} workers; its output ends: ${stdout.slice(-300)}`,
        );
      measured.set(workers, [...(measured.get(workers) ?? []), ...msPerIter.map((ms) => (1000 * BATCH) / ms)]);
    }
    const epochsEach = measured.get(1)!.length;
    console.log(
      `num_workers what-if against the script without ds-analyzer (${os.cpus().length} CPUs; profiled at 1 worker; samples/s)`,
    );
    console.log(
      `  workers  predicted (no sweep)  predicted (--workers 2)  measured without the tool (${epochsEach} epochs over 2 runs, the first epoch of each left out)`,
    );
    const meanOf = (workers: number): number => {
      const rates = measured.get(workers)!;
      return rates.reduce((a, b) => a + b, 0) / rates.length;
    };
    for (const [k, workers] of counts.entries()) {
      const rates = measured.get(workers)!;
      const mean = meanOf(workers);
      const sd = Math.sqrt(rates.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, rates.length - 1));
      const err = (p: number) => `${p.toFixed(1).padStart(7)} (${(((p - mean) / mean) * 100).toFixed(0).padStart(4)}%)`;
      console.log(
        `  ${String(workers).padStart(7)}  ${err(fromPlain[k]).padStart(20)}  ${err(fromSwept[k]).padStart(23)}  ${mean.toFixed(1)} ± ${sd.toFixed(1)} (sd of ${rates.length} epochs)`,
      );
    }
    // The profiles ran minutes before the runs without the tool, on a machine whose pace drifts: the
    // speed-up over the profiled count, predicted against measured, cancels that.
    const at1 = counts.indexOf(1);
    console.log(
      '  speed-up over 1 worker (the profiled count), predicted (no sweep / --workers 2) against measured without the tool:',
    );
    for (const [k, workers] of counts.entries()) {
      const measuredRatio = meanOf(workers) / meanOf(1);
      const ratio = (p: number[]) =>
        `${(p[k] / p[at1]).toFixed(2)}x (${(((p[k] / p[at1] - measuredRatio) / measuredRatio) * 100).toFixed(0)}%)`;
      console.log(
        `  ${String(workers).padStart(7)}  ${ratio(fromPlain).padStart(20)}  ${ratio(fromSwept).padStart(23)}  ${measuredRatio.toFixed(2)}x`,
      );
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await bench();
}
