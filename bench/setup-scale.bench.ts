// What setting up the cached and cold modes costs at ImageNet's file count:
// 1,280,000 files of 1 KiB in 1,000 directories (the cold-keeper bench's
// generator), each set-up step timed in a child process of its own (walk,
// residency with everything resident and with nothing, evict, warm from cold
// and again when all is resident) with that child's peak RSS; then the real
// CLI, `profile --modes cached,cold` of a light job (bench/setup-scale-job.ts),
// with its wall time, its peak RSS (VmHWM polled every 100 ms) and whether
// each mode's cache state was proven. Generating takes ~80 s here and
// removing ~140 s.
//
//   node dist/bench/setup-scale.bench.js
//   env: BENCH_SETUP_FILES (default 1280000), BENCH_SETUP_CLI (1; 0 skips the CLI run),
//        BENCH_SETUP_KEEP_PROFILE (a path: the CLI run's profile is copied there)
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { loadLibc } from '../src/system/kernel/libc.js';
import { pageCacheSupport } from '../src/system/page-cache/page-cache.js';
import { writeFiles } from './cold-keeper.bench.js';

const run = promisify(execFile);
const here = (name: string): string => fileURLToPath(new URL(name, import.meta.url));
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** Generates the files, times the set-up steps and the CLI, prints the figures, removes the files. */
export async function bench(): Promise<void> {
  const support = pageCacheSupport();
  const libc = loadLibc();
  if (!support.evict || !support.residency || !libc.ok) {
    console.log(`setup-scale bench skipped: ${support.reason ?? 'libc unavailable'}`);
    return;
  }
  const count = Number(process.env.BENCH_SETUP_FILES ?? 1_280_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsa-bench-setup-'));
  const data = path.join(dir, 'data');
  fs.mkdirSync(data);
  try {
    const generated = performance.now();
    writeFiles(data, count);
    libc.libc.sync();
    console.log(
      `set-up at scale: ${count.toLocaleString('en')} files x 1 KiB in ${Math.ceil(count / 1280)} dirs (written in ${((performance.now() - generated) / 1000).toFixed(0)} s)`,
    );

    const { stdout } = await run(process.execPath, [here('./setup-scale-child.js'), data], {
      timeout: 900_000,
      maxBuffer: 1 << 20,
    });
    const steps = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, number>;
    const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
    console.log(`  walk                      ${steps.walkSec.toFixed(1).padStart(6)} s  (${steps.files} files)`);
    console.log(
      `  residency, all resident   ${steps.residencyHotSec.toFixed(1).padStart(6)} s  (${pct(steps.residentHot)} resident)`,
    );
    console.log(`  evict (syncfs + fadvise)  ${steps.evictSec.toFixed(1).padStart(6)} s`);
    console.log(
      `  residency, none resident  ${steps.residencyColdSec.toFixed(1).padStart(6)} s  (${pct(steps.residentCold)} resident)`,
    );
    console.log(
      `  warm from cold            ${steps.warmColdSec.toFixed(1).padStart(6)} s  (${steps.warmAdvised} read ahead on advice, ${steps.warmRead} read; then ${pct(steps.residentAfterWarm)} resident)`,
    );
    console.log(
      `  warm when resident        ${steps.warmHotSec.toFixed(1).padStart(6)} s  (${steps.warmAgainRead} files read)`,
    );
    console.log(
      `  walk + residency + evict  ${(steps.walkSec + steps.residencyHotSec + steps.evictSec).toFixed(1).padStart(6)} s; peak RSS of the set-up process ${steps.peakRssMB} MB`,
    );

    if (process.env.BENCH_SETUP_CLI !== '0') await profileRun(dir, data, count);
  } finally {
    const removing = performance.now();
    fs.rmSync(dir, { recursive: true, force: true });
    console.log(`  (removed in ${((performance.now() - removing) / 1000).toFixed(0)} s)`);
  }
}

// The real CLI on the same files, with a light job: wall time, peak RSS, the modes' states.
async function profileRun(dir: string, data: string, count: number): Promise<void> {
  const out = path.join(dir, 'profile.json');
  const argv = [
    path.join(repoRoot, 'bin/ds-analyzer.js'),
    'profile',
    '--data',
    data,
    '--modes',
    'cached,cold',
    '--out',
    out,
    // 1000 iterations a run at least: the cold keeper's share is measured over runs of seconds, not the 2 s precision
    // alone needs here.
    '--min-iterations',
    '1000',
    '--max-iterations',
    '2000',
    '--timeout',
    '5m',
    '--',
    process.execPath,
    here('./setup-scale-job.js'),
    data,
    String(count),
  ];
  const started = performance.now();
  const child = spawn(process.execPath, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  let peakKiB = 0;
  // The largest RSS of each 5 s, to see which step holds the memory.
  const timeline: number[] = [];
  const poll = setInterval(() => {
    try {
      const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const hwm = /^VmHWM:\s+(\d+)/m.exec(status);
      const rss = /^VmRSS:\s+(\d+)/m.exec(status);
      if (hwm) peakKiB = Math.max(peakKiB, Number(hwm[1]));
      const slot = Math.floor((performance.now() - started) / 5000);
      if (rss) timeline[slot] = Math.max(timeline[slot] ?? 0, Math.round(Number(rss[1]) / 1024));
    } catch {
      // Exited between two polls.
    }
  }, 100);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearInterval(poll);
  const wallSec = (performance.now() - started) / 1000;
  console.log(
    `  profile --modes cached,cold: exit ${code}, ${wallSec.toFixed(0)} s wall, peak RSS of the CLI ${(peakKiB / 1024).toFixed(0)} MB`,
  );
  console.log(`  RSS of the CLI, largest of each 5 s (MB): ${Array.from(timeline, (mb) => mb ?? '-').join(' ')}`);
  if (process.env.BENCH_SETUP_KEEP_PROFILE && fs.existsSync(out))
    fs.copyFileSync(out, process.env.BENCH_SETUP_KEEP_PROFILE);
  if (!fs.existsSync(out)) {
    console.log(`  no profile written; stderr ends:\n${stderr}`);
    return;
  }
  const profile = JSON.parse(fs.readFileSync(out, 'utf8')) as {
    modes: Record<
      string,
      {
        state: { proven: boolean; reason: string; keeper?: { mechanism: string; cpuSec: number; cpuShare: number } };
        wallSec: number;
        summary: { measuredIterations: number } | null;
        passes?: { label: string; proven: boolean }[];
      }
    >;
    warnings: string[];
    cost?: { schedule: string; launches: number; wallSec: number; measuredSec: number; measuredShare: number };
  };
  const cost = profile.cost;
  if (cost)
    console.log(
      `  cost: ${cost.schedule}, ${cost.launches} launch(es), ${cost.wallSec.toFixed(0)} s of which ${cost.measuredSec.toFixed(1)} s measured (${(cost.measuredShare * 100).toFixed(0)}%)`,
    );
  for (const [mode, result] of Object.entries(profile.modes)) {
    console.log(
      `  ${mode.padEnd(7)} ${result.state.proven ? 'proven' : 'UNPROVEN'}: ${result.state.reason} (${result.wallSec.toFixed(1)} s, ${result.summary?.measuredIterations ?? 0} measured iterations)`,
    );
    if (result.passes)
      console.log(
        `          runs: ${result.passes.map((p) => `${p.label} ${p.proven ? 'proven' : 'UNPROVEN'}`).join(', ')}`,
      );
    const keeper = result.state.keeper;
    if (keeper)
      console.log(
        `          cold keeper (${keeper.mechanism}): ${keeper.cpuSec.toFixed(2)} CPU-s, ${(keeper.cpuShare * 100).toFixed(1)}% of one CPU over the run`,
      );
  }
  for (const warning of profile.warnings) console.log(`  warning: ${warning}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await bench();
}
