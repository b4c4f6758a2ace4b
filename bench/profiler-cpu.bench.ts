// The profiler's own CPU in each mode, against the goal of 1% of one CPU in
// every mode, on a prep-bound job (the loader sets the pace: 2 workers, 20
// CPU-ms of prep a sample, 3,000 files of a JPEG's size), by component.
//
// Each mode runs once through runMode, as profile runs it (the profile's
// defaults for precision and iterations), with one CPU ledger
// (system/kernel/cpu-ledger.ts) handed to the run (its resource sampler and
// events reader) and to the local-file source (its meter, its states'
// warming and eviction, the keepers), as profile hands it. A mode's share is its profilerCpuSec (process.cpuUsage
// around
// the run, as the profile records it) over its wall time; the components'
// shares are what each charged between the job's start and the run's end.
// 'other' is the rest of profilerCpuSec: the stopping rule (the run charges
// the events reader's polls only), supervision, the timers'
// wake-ups themselves (about 0.2 ms of CPU each on this VM, uncharged: a
// component charges its callback), reaping the job's group at its end, the
// garbage collector, and Node's own threads. Set-up (warming before the
// cached mode, evicting before the cold one) runs before the job starts and
// outside profilerCpuSec; it is printed apart.
//
//   node dist/bench/profiler-cpu.bench.js
//   env: BENCH_PROFILER_JOB ('emulated' or 'python'; default python where
//        /usr/bin/python3 imports torch and torchvision, else emulated),
//        BENCH_PROFILER_FILES (3000), BENCH_PROFILER_PREP_MS (20),
//        BENCH_PROFILER_MODES (synthetic,cached,cold), BENCH_PROFILER_MIN_ITERATIONS (the profile's
//        default, 50: modes of 10 to 20 s here, whose fixed costs weigh; 300 shows the steady state)
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { generateDataset } from '../src/emulator/generate-dataset.js';
import { LocalFilesSource } from '../src/profile/data-sources/local-files.js';
import { PROFILE_FLAG_DEFAULTS, SUPERVISION } from '../src/profile/run-defaults.js';
import { runMode } from '../src/profile/run-mode.js';
import type { Mode } from '../src/schema/events.js';
import {
  CpuLedger,
  LEDGER_COMPONENTS,
  readingDifference,
  totalCpuSec,
  type LedgerReading,
} from '../src/system/kernel/cpu-ledger.js';

const run = promisify(execFile);

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const PYTHON = '/usr/bin/python3';
const EMULATOR = fileURLToPath(new URL('../src/emulator/job.js', import.meta.url));
const PREP_LOADER = path.join(repoRoot, 'bench/python/prep_loader.py');
const MAKE_JPEGS = path.join(repoRoot, 'examples/pytorch/make_dataset.py');
/** The goal: the profiler's CPU in any mode, as a share of one CPU. */
const GOAL_SHARE = 0.01;
const MODES = (process.env.BENCH_PROFILER_MODES ?? 'synthetic,cached,cold').split(',') as Mode[];

/** A job and the folder its profile's --data names. */
interface BenchJob {
  kind: 'emulated' | 'python';
  argv: string[];
  data: string;
}

export async function bench(): Promise<void> {
  const files = Number(process.env.BENCH_PROFILER_FILES ?? 3000);
  const prepMs = Number(process.env.BENCH_PROFILER_PREP_MS ?? 20);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsa-bench-profiler-cpu-'));
  try {
    const job = await prepareJob(dir, files, prepMs);
    console.log(
      `profiler CPU on a prep-bound ${job.kind === 'python' ? 'PyTorch ImageFolder loader' : 'emulated job'}: 2 workers, ${prepMs} CPU-ms of prep a sample, ${files.toLocaleString('en')} files; ` +
        `goal ${(GOAL_SHARE * 100).toFixed(0)}% of one CPU in every mode (ratio = share / goal, <= 1 meets it); ${os.cpus().length} CPUs here`,
    );
    const ledger = new CpuLedger();
    const source = new LocalFilesSource([job.data], { dropCaches: false, ledger });
    const dataset = await source.list();
    try {
      for (const mode of MODES) await measureMode(mode, job, dataset, source, ledger, dir);
    } finally {
      await source.close();
    }
    console.log(
      `  (the ledger's own cost: ${(ledger.clockCostSec() * 1e6).toFixed(1)} us a clock reading, two a charge)`,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The job: the PyTorch loader on JPEGs where torch is here (or asked for), else the emulated job on its own files. */
async function prepareJob(dir: string, files: number, prepMs: number): Promise<BenchJob> {
  const asked = process.env.BENCH_PROFILER_JOB;
  const torch =
    asked === 'emulated'
      ? false
      : await run(PYTHON, ['-c', 'import torch, torchvision, PIL']).then(
          () => true,
          () => false,
        );
  if (asked === 'python' && !torch)
    throw new Error(`BENCH_PROFILER_JOB=python needs ${PYTHON} with torch, torchvision and PIL`);
  if (torch) {
    const classes = 10;
    await run(
      PYTHON,
      [
        MAKE_JPEGS,
        path.join(dir, 'jpegs'),
        '--classes',
        String(classes),
        '--train-per-class',
        String(Math.ceil(files / classes)),
        '--val-per-class',
        '1',
      ],
      { timeout: 600_000 },
    );
    const data = path.join(dir, 'jpegs', 'train');
    return { kind: 'python', data, argv: [PYTHON, PREP_LOADER, data, String(prepMs)] };
  }
  // A JPEG's size (ImageNet's mean is about 110 KB); prep counted on the worker's CPU clock, as the PyTorch loader's.
  const data = path.join(dir, 'files');
  await generateDataset(data, { files, fileBytes: 110 * 1024, seed: 11 });
  return {
    kind: 'emulated',
    data,
    argv: [
      process.execPath,
      EMULATOR,
      '--data',
      data,
      '--workers',
      '2',
      '--prep-ms',
      String(prepMs),
      '--prep-clock',
      'cpu',
      '--compute-ms',
      '5',
      '--batch-size',
      '8',
    ],
  };
}

async function measureMode(
  mode: Mode,
  job: BenchJob,
  dataset: Awaited<ReturnType<LocalFilesSource['list']>>,
  source: LocalFilesSource,
  ledger: CpuLedger,
  dir: string,
): Promise<void> {
  const before = ledger.reading();
  let atStart: LedgerReading | null = null;
  const result = await runMode({
    mode,
    argv: job.argv,
    cwd: dir,
    env: process.env,
    dataset,
    dataSource: source,
    modeDir: path.join(dir, 'runs', mode),
    precision: parseFloat(PROFILE_FLAG_DEFAULTS.precision) / 100,
    minIterations: Number(process.env.BENCH_PROFILER_MIN_ITERATIONS ?? PROFILE_FLAG_DEFAULTS.minIterations),
    maxIterations: Number(PROFILE_FLAG_DEFAULTS.maxIterations),
    timeoutSec: 900,
    firstIterationTimeoutSec: 300,
    stopGraceSec: SUPERVISION.stopGraceSec,
    killGraceSec: SUPERVISION.killGraceSec,
    sync: SUPERVISION.sync,
    pollMs: SUPERVISION.pollMs,
    wrapArgv: (argv) => argv,
    cacheState: source.modeState,
    ledger,
    beforeJobStart: async () => {
      atStart = ledger.reading();
    },
    interrupted: () => false,
  });
  const setUp = atStart ? readingDifference(atStart, before) : null;
  const during = atStart ? ledger.since(atStart) : ledger.since(before);
  const wall = result.wallSec;
  const profiler = result.profilerCpuSec ?? 0;
  const share = profiler / wall;
  const pct = (sec: number): string => `${((100 * sec) / wall).toFixed(2)}%`;
  const charged = totalCpuSec(during);
  const parts = LEDGER_COMPONENTS.filter((c) => during[c].calls > 0).map(
    (c) => `${c} ${pct(during[c].cpuSec)} (${during[c].calls})`,
  );
  console.log(
    `  ${mode.padEnd(9)} ${pct(profiler).padStart(6)} of a CPU, ratio ${(share / GOAL_SHARE).toFixed(2)} ` +
      `(${profiler.toFixed(3)} CPU-s over ${wall.toFixed(1)} s, ${result.summary?.measuredIterations ?? 0} measured iterations, ${result.status}, state ${result.state.proven ? 'proven' : 'UNPROVEN'})`,
  );
  console.log(
    `            by component: ${parts.join(', ') || 'none charged'}; other ${pct(Math.max(0, profiler - charged))}`,
  );
  if (result.state.keeper)
    console.log(
      `            cold keeper (${result.state.keeper.mechanism}) as the proof reports it: ${(result.state.keeper.cpuShare * 100).toFixed(2)}% of a CPU`,
    );
  if (setUp && totalCpuSec(setUp) > 0) {
    const setUpParts = LEDGER_COMPONENTS.filter((c) => setUp[c].calls > 0).map(
      (c) => `${c} ${setUp[c].cpuSec.toFixed(3)} CPU-s`,
    );
    console.log(`            set-up before the job (outside the share): ${setUpParts.join(', ')}`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await bench();
}
