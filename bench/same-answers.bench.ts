/**
 * The same answers from one launch as from a launch a run, and from the job
 * run without the tool, side by side in one sitting, on three real PyTorch
 * jobs the end-to-end tests hold against ground truth:
 * - the DatasetFolder fixture (test/fixtures/datasetfolder-train.py): prep on
 *   2 workers, a sleeping step, storage throttled for the cold mode;
 * - the checkpointing loop (test/fixtures/checkpoint-train.py): a 64 MiB
 *   torch.save every 5 iterations;
 * - two ranks under torchrun (gloo), rank 1 preparing its batches slower.
 * Each is profiled in one launch (the default) and with --separate-launches,
 * alternated, and run without the tool. Printed: compute, prep, fetch and
 * checkpoint stalls of both schedules, their difference against the issue's
 * margin (max(10% of the stall, 3% of the iteration)), and the job's own meter
 * without the tool beside the tool's pace. Needs /usr/bin/python3 with torch;
 * the throttled cold mode needs root and an io cgroup (else unthrottled).
 * Run: npm run bench -- same-answers  (BENCH_SAME_JOBS=torchrun: one job only)
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { mean } from '../src/analysis/stats.js';
import { throttleBlocker } from '../src/demo/run-demo.js';
import { ProfileSchema, type Estimate, type Profile } from '../src/schema/profile.js';

const CLI = fileURLToPath(new URL('../../bin/ds-analyzer.js', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../../test/fixtures/', import.meta.url));
const PYTHON = '/usr/bin/python3';
const QUICK = ['--precision', '8%', '--min-iterations', '30', '--max-iterations', '200'];
/** Saves of a run without the tool left out of its steady checkpoint stall. */
const STEADY_AFTER_SAVES = 5;

interface Job {
  name: string;
  data: string;
  argv: string[];
  profileArgs: string[];
  /** The job without the tool: its mean ms per iteration in the state it names, by its own meter. */
  plain: () => Promise<{ label: string; ms: number }>;
  /** The tool's figure for the same thing. */
  toolFigure: (p: Profile) => number | null;
}

export async function bench(): Promise<void> {
  if ((await execa(PYTHON, ['-c', 'import torch'], { reject: false })).exitCode !== 0) {
    console.log(`same-answers: skipped: ${PYTHON} has no torch`);
    return;
  }
  const work = mkdtempSync(join(tmpdir(), 'dsa-bench-same-'));
  try {
    // BENCH_SAME_JOBS=folder,checkpoint,torchrun (any of them): the jobs to compare; all by default.
    const only = process.env.BENCH_SAME_JOBS?.split(',') ?? ['folder', 'checkpoint', 'torchrun'];
    const makers: [string, () => Promise<Job> | Job][] = [
      ['folder', () => datasetFolderJob(work)],
      ['checkpoint', () => checkpointJob(work)],
      ['torchrun', () => torchrunJob(work)],
    ];
    for (const [name, make] of makers) if (only.includes(name)) await compare(await make(), work);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function compare(job: Job, work: string): Promise<void> {
  const dir = join(work, job.name);
  mkdirSync(dir, { recursive: true });
  const profileWith = async (label: string, extra: string[]): Promise<Profile | null> => {
    const out = join(dir, `${label}.json`);
    const run = await execa(
      process.execPath,
      [CLI, 'profile', '--data', job.data, '--out', out, ...QUICK, ...job.profileArgs, ...extra, '--', ...job.argv],
      { reject: false, cwd: dir },
    );
    if (run.exitCode !== 0) {
      console.log(
        `${job.name} ${label}: profile failed (exit ${run.exitCode}): ${run.stderr.split('\n').slice(-3).join(' | ')}`,
      );
      return null;
    }
    return ProfileSchema.parse(JSON.parse(readFileSync(out, 'utf8')));
  };
  const plainBefore = await job.plain();
  const one = await profileWith('one-launch', []);
  const separate = await profileWith('separate', ['--separate-launches']);
  const plainAfter = await job.plain();
  if (!one || !separate) return;
  const iterMs =
    one.analysis?.iterMs?.mean ?? one.modes.cold?.summary?.iterMs.mean ?? one.modes.cached?.summary?.iterMs.mean ?? 0;
  console.log(
    `\n${job.name}: ${one.cost!.launches} launch(es) against ${separate.cost!.launches}; wall ${one.cost!.wallSec.toFixed(0)} s against ${separate.cost!.wallSec.toFixed(0)} s`,
  );
  console.log('part                one launch         launch a run       difference  margin   within');
  const rows: [string, (p: Profile) => Estimate | null | undefined][] = [
    ['compute', (p) => p.analysis?.computeMs],
    ['prep stall', (p) => p.analysis?.prepStallMs],
    ['fetch stall', (p) => p.analysis?.fetchStallMs],
    ['checkpoint stall', (p) => p.analysis?.checkpointStall?.ms],
  ];
  for (const [name, pick] of rows) {
    const a = pick(one);
    const b = pick(separate);
    if (!a && !b) continue;
    const show = (e: Estimate | null | undefined) =>
      e ? `${e.mean.toFixed(1)} ± ${(e.halfWidth ?? 0).toFixed(1)} ms` : '—';
    const diff = a && b ? Math.abs(a.mean - b.mean) : null;
    const margin = Math.max(0.1 * Math.max(a?.mean ?? 0, b?.mean ?? 0), 0.03 * iterMs);
    console.log(
      `${name.padEnd(19)} ${show(a).padEnd(18)} ${show(b).padEnd(18)} ${diff === null ? '—'.padEnd(10) : `${diff.toFixed(1)} ms`.padEnd(10)}  ${`${margin.toFixed(1)} ms`.padEnd(8)} ${diff === null ? '—' : diff <= margin ? 'yes' : 'NO'}`,
    );
  }
  const truth = (plainBefore.ms + plainAfter.ms) / 2;
  const shown = (p: Profile) => job.toolFigure(p)?.toFixed(1) ?? '—';
  console.log(
    `${plainBefore.label}: without the tool ${plainBefore.ms.toFixed(1)} and ${plainAfter.ms.toFixed(1)} ms (before, after); ` +
      `one launch ${shown(one)} ms, a launch a run ${shown(separate)} ms; margin ${Math.max(0.1 * truth, 0.03 * iterMs).toFixed(1)} ms around ${truth.toFixed(1)}`,
  );
}

/**
 * 4 classes of 150 files of 96 KiB; 2 workers, 2 smoothing passes a sample, a 40 ms sleeping step; storage at 8 MB/s
 * when it can be throttled.
 */
async function datasetFolderJob(work: string): Promise<Job> {
  const data = join(work, 'folder-data');
  for (let c = 0; c < 4; c++) {
    mkdirSync(join(data, `c${c}`), { recursive: true });
    for (let i = 0; i < 150; i++)
      writeFileSync(join(data, `c${c}`, `s${String(i).padStart(4, '0')}.bin`), randomBytes(96 << 10));
  }
  const throttled = (await throttleBlocker(data, process.env)) === null;
  const argv = [
    PYTHON,
    join(FIXTURES, 'datasetfolder-train.py'),
    data,
    '--workers',
    '2',
    '--batch',
    '16',
    '--work',
    '2',
    '--sleep-ms',
    '40',
    '--report',
  ];
  return {
    name: `DatasetFolder (prep on 2 workers, storage ${throttled ? 'at 8 MB/s' : 'NOT throttled'})`,
    data,
    argv,
    profileArgs: throttled ? ['--storage-bw', '8MB/s'] : [],
    plain: async () => {
      // The files read once, so every epoch runs from the page cache; the first epoch (workers starting, warm-up) left
      // out.
      await execa('sh', ['-c', `find '${data}' -type f -exec cat {} + > /dev/null`]);
      const run = await execa(argv[0], [...argv.slice(1), '--epochs', '4']);
      const epochs = [...run.stdout.matchAll(/([\d.]+) ms per iteration/g)].map((m) => Number(m[1]));
      return { label: 'cached pace, epochs 2-4 (each with its worker start)', ms: mean(epochs.slice(1)) };
    },
    // Cached pace with its epoch boundaries, as the script's epoch meter counts them.
    toolFigure: (p) => withBoundaries(p, 'cached'),
  };
}

/** A 64 MiB torch.save every 5 iterations of a 50 ms step: the checkpoint stall in the steady state. */
function checkpointJob(work: string): Job {
  const data = join(work, 'ckpt-data');
  mkdirSync(data, { recursive: true });
  for (let i = 0; i < 160; i++) writeFileSync(join(data, `f${String(i).padStart(4, '0')}.bin`), Buffer.alloc(65536, i));
  const script = join(FIXTURES, 'checkpoint-train.py');
  const saves = ['--save-every', '5', '--save-mb', '64'];
  let runs = 0;
  return {
    name: 'checkpointing loop (64 MiB torch.save every 5 iterations)',
    data,
    argv: [PYTHON, script, '--data', data, ...saves],
    profileArgs: [],
    plain: async () => {
      const meterFile = join(work, `ckpt-meter-${runs++}.json`);
      await execa(PYTHON, [script, '--data', data, '--meter', meterFile, '--iterations', '200', ...saves], {
        cwd: work,
      });
      const meter = JSON.parse(readFileSync(meterFile, 'utf8')) as { batches: number[]; saves: number[] };
      // A process's first saves cost more: the first makes the file and uses the pickler first; the next few
      // fill the page cache with dirty pages until writeback keeps pace (the 4x saves cluster there). A training
      // run's thousands of saves are the steady ones; the profile's synthetic block absorbs the first.
      const perSave = mean(meter.saves.slice(STEADY_AFTER_SAVES)) * 1000;
      return {
        label: `checkpoint stall per iteration (saves after the first ${STEADY_AFTER_SAVES})`,
        ms: perSave / (meter.batches.length / meter.saves.length),
      };
    },
    toolFigure: (p) => p.analysis?.checkpointStall?.ms.mean ?? null,
  };
}

/**
 * Two ranks under torchrun (gloo), rank 1 preparing its batches 8 ms a batch against rank 0's 4: the slowest rank sets
 * the pace.
 */
function torchrunJob(work: string): Job {
  const data = join(work, 'ddp-data');
  mkdirSync(data, { recursive: true });
  writeFileSync(join(data, 'unused.bin'), Buffer.alloc(4096));
  const script = join(FIXTURES, 'ddp_train.py');
  const torchrun = ['/usr/bin/torchrun', '--standalone', '--nproc_per_node', '2'];
  // Without the tool, Debian 12's torchrun (torch 1.13 on Python 3.11) needs the fix the hook applies in a
  // profiled run (docs/pytorch.md): Std.from_str("0") returns None there.
  const plainTorchrun = join(work, 'plain_torchrun.py');
  writeFileSync(
    plainTorchrun,
    [
      'import re, sys',
      'import torch.distributed.elastic.multiprocessing.api as api',
      'if api.Std.from_str("0") is None:',
      '    def from_str(cls, vm):',
      '        if re.match(api._VALUE_REGEX, vm): return cls(int(vm))',
      '        return {int(i): cls(int(v)) for i, v in (m.split(":") for m in vm.split(","))}',
      '    api.Std.from_str = classmethod(from_str)',
      'from torch.distributed.run import main',
      'sys.exit(main())',
      '',
    ].join('\n'),
  );
  return {
    name: 'two ranks under torchrun (gloo)',
    data,
    argv: [...torchrun, script],
    profileArgs: ['--modes', 'synthetic,cached'],
    plain: async () => {
      const run = await execa(PYTHON, [plainTorchrun, ...torchrun.slice(1), script, '300'], { cwd: work });
      const line = run.stdout.split('\n').find((l) => l.startsWith('OWN_METER '))!;
      const times = JSON.parse(line.slice('OWN_METER '.length)) as number[];
      return { label: 'pace, rank 0 (iterations 50-300)', ms: mean(times.slice(50)) };
    },
    toolFigure: (p) => p.modes.cached?.summary?.iterMs.mean ?? null,
  };
}

/**
 * A mode's pace plus its epoch boundaries (the last epoch's end to the next one's first batch request) per iteration.
 */
function withBoundaries(p: Profile, mode: 'cached' | 'cold'): number | null {
  const result = p.modes[mode];
  if (!result?.summary) return null;
  const rank = result.ranks.find((r) => r.rank === result.paceRank) ?? result.ranks[0];
  const later = (rank.epochs ?? []).filter((e) => e.epoch > 0 && e.epochIterations);
  if (later.length === 0) {
    // No epoch began inside the mode's block: the workers' start as the profile measured it elsewhere (iter(loader)).
    const boundary = p.analysis?.boundaryStall;
    return result.summary.iterMs.mean + (boundary?.epochIterations ? boundary.createMs / boundary.epochIterations : 0);
  }
  const perEpoch = mean(later.map((e) => e.createMs + (e.gapMs ?? 0)));
  return result.summary.iterMs.mean + perEpoch / later[0].epochIterations!;
}
