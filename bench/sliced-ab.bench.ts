/**
 * A/B in slices (issue 42, not yet offered by gate --against): the reference and the candidate of
 * examples/pytorch/train.py (squeezenet, CPU, 64 px crops; the candidate 68 px, about 10% more compute a sample)
 * launched once each and kept running, the machine handed to one at a time: the other's whole process tree is stopped
 * (SIGSTOP) for a slice of 2 s, in A B B A order. Each slice's pace is the job's own iterations that began and ended
 * inside it, the first after a resume left out; adjacent slices pair, and the change is judged as gate --against judges
 * its rounds (gate/paired.ts) at a 5% budget. Rounds in turn (gate-against.bench.ts) let the pace of a shared machine
 * move between rounds; slices a second apart share it. Both jobs run without address-space randomisation (setarch -R)
 * and with one hash seed and one --seed: otherwise each launch carried an offset of its own (A/A read +3.0% and -4.3% in two runs of a
 * Python prototype). DSA_BENCH_SLICED_RUNS sets the runs of each (default 2), DSA_BENCH_SLICED_SEC the measured seconds
 * a run (default 150), DSA_BENCH_SLICED_CASE=A/A or A/B one case alone. Needs /usr/bin/python3 with torch. Numbers for
 * people, never asserted.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { arch, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { abbaOrder, type Arm, judgePaired, pairedChange, type RoundPace } from '../src/gate/paired.js';
import { EventsReader } from '../src/profile/events-reader.js';
import { ENV } from '../src/schema/events.js';
import { processTree } from '../src/system/kernel/proc.js';

const PYTHON = '/usr/bin/python3';
const PACKAGE = fileURLToPath(new URL('../../python', import.meta.url));
const TRAIN = fileURLToPath(new URL('../../examples/pytorch/train.py', import.meta.url));
const MAKE_DATASET = fileURLToPath(new URL('../../examples/pytorch/make_dataset.py', import.meta.url));
const SLICE_MS = 2000;
/** Slices each version runs before any is measured: torch's import, the first epoch's workers, the allocator. */
const WARMUP_SLICES = 20;
const LIMIT = 0.05;

export async function bench(): Promise<void> {
  if ((await execa(PYTHON, ['-c', 'import torch, torchvision'], { reject: false })).exitCode !== 0) {
    console.log(`skipped: needs ${PYTHON} with torch and torchvision`);
    return;
  }
  const work = mkdtempSync(join(tmpdir(), 'dsa-bench-sliced-'));
  const runs = Number(process.env.DSA_BENCH_SLICED_RUNS ?? 2);
  const measuredSec = Number(process.env.DSA_BENCH_SLICED_SEC ?? 150);
  try {
    const root = join(work, 'jpegs');
    await execa(PYTHON, [MAKE_DATASET, root, '--classes', '10', '--train-per-class', '150', '--val-per-class', '5']);
    const cases = [
      ['A/A', 64],
      ['A/B (68 px)', 68],
    ] as const;
    const only = process.env.DSA_BENCH_SLICED_CASE; // 'A/A' or 'A/B': that case alone
    for (const [name, candidateSize] of cases.filter(([name]) => !only || name.startsWith(only))) {
      for (let run = 1; run <= runs; run++) {
        const started = Date.now();
        const out = join(work, `${name.slice(0, 3).replace('/', '')}-${run}`);
        const measured = await slicedRun(root, [64, candidateSize], measuredSec, out);
        report(`${name}, run ${run}`, measured, (Date.now() - started) / 60_000);
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** One slice: which version ran, from when to when (ms since the epoch). */
interface Slice {
  arm: Arm;
  from: number;
  to: number;
}

/** Both versions launched, handed the machine in turn, stopped; their slices and each one's iterations. */
async function slicedRun(
  root: string,
  sizes: [number, number],
  measuredSec: number,
  out: string,
): Promise<{ slices: Slice[]; iterations: Record<Arm, Iteration[]> }> {
  const arms: Arm[] = ['reference', 'candidate'];
  const jobs = arms.map((arm, k) => launch(root, sizes[k], join(out, arm)));
  const slices: Slice[] = [];
  // Ctrl-C: the jobs (in process groups of their own) go too, stopped ones included.
  const interrupted = () => {
    for (const job of jobs) stop(job);
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  try {
    const order = [...abbaOrder(WARMUP_SLICES / 2), ...abbaOrder(Math.ceil(measuredSec / (SLICE_MS / 1000) / 2))];
    freeze(jobs[1], true);
    let running: Arm = 'reference';
    for (const arm of order) {
      if (arm !== running) {
        freeze(jobs[arms.indexOf(running)], true);
        freeze(jobs[arms.indexOf(arm)], false);
        running = arm;
      }
      const from = Date.now();
      await sleep(SLICE_MS);
      slices.push({ arm, from, to: Date.now() });
    }
  } finally {
    process.off('SIGINT', interrupted);
    for (const job of jobs) stop(job);
  }
  const iterations = {
    reference: iterationsIn(join(out, 'reference')),
    candidate: iterationsIn(join(out, 'candidate')),
  };
  return { slices: slices.slice(WARMUP_SLICES), iterations };
}

/** train.py at `imageSize`, profiled by the hook in the cached mode, its events in `events`. */
function launch(root: string, imageSize: number, events: string): ChildProcess {
  mkdirSync(events, { recursive: true });
  const job = [PYTHON, TRAIN, '-a', 'squeezenet1_0', '-b', '16', '-j', '2', '--no-val', '--seed', '1'];
  job.push('--epochs', '1000', '--image-size', String(imageSize), root);
  const env = {
    ...process.env,
    PYTHONPATH: PACKAGE,
    PYTHONHASHSEED: '0',
    [ENV.mode]: 'cached',
    [ENV.eventsDir]: events,
  };
  return spawn('setarch', [arch() === 'arm64' ? 'aarch64' : 'x86_64', '-R', ...job], {
    env,
    stdio: 'ignore',
    detached: true,
  });
}

/** Stops (or resumes) every process of the job's tree: its loader workers with it. */
function freeze(job: ChildProcess, stopped: boolean): void {
  for (const pid of processTree(job.pid!)) {
    try {
      process.kill(pid, stopped ? 'SIGSTOP' : 'SIGCONT');
    } catch {
      // gone between the listing and the signal
    }
  }
}

function stop(job: ChildProcess): void {
  freeze(job, false);
  try {
    process.kill(-job.pid!, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** An iteration of the job's main process: when it began and ended (ms since the epoch), its samples. */
interface Iteration {
  from: number;
  to: number;
  samples: number;
}

/** The iterations of the job's rank-0 process, as the profile reads them (its loader workers write none). */
function iterationsIn(events: string): Iteration[] {
  return new EventsReader(events)
    .finish()
    .filter((process) => (process.start?.rank ?? 0) === 0)
    .flatMap((process) => process.iterations)
    .map((it) => ({ from: it.t - it.waitMs - it.computeMs, to: it.t, samples: it.samples }));
}

/** Each slice's pace (ms a sample over the iterations inside it, the first after a resume left out), judged. */
function report(name: string, run: Awaited<ReturnType<typeof slicedRun>>, minutes: number): void {
  const paces: RoundPace[] = [];
  for (const slice of run.slices) {
    const inside = run.iterations[slice.arm].filter((it) => it.from >= slice.from && it.to <= slice.to).slice(1);
    const samples = inside.reduce((s, it) => s + it.samples, 0);
    if (inside.length < 2) throw new Error(`${name}: a slice of ${slice.arm} held ${inside.length} iterations`);
    paces.push({ arm: slice.arm, msPerSample: inside.reduce((s, it) => s + it.to - it.from, 0) / samples });
  }
  const change = pairedChange(paces);
  const pct = (v: number | null) => (v === null ? '—' : `${v >= 0 ? '+' : ''}${(v * 100).toFixed(1)}%`);
  console.log(
    `${name}: ${change.pairs} pairs of ${SLICE_MS / 1000} s slices, ${minutes.toFixed(1)} min; change ${pct(change.relative)} ` +
      `(95%: ${pct(change.low)} to ${pct(change.high)}); at a ${LIMIT * 100}% budget: ${judgePaired(change, LIMIT)}`,
  );
}
