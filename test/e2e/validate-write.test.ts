import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { ExitCode } from '../../src/errors.js';
import { detectCgroups } from '../../src/system/cgroups/cgroups.js';
import { wholeDiskDevice } from '../../src/system/kernel/block-device.js';
import type { ValidateOutput } from '../../src/schema/validate-output.js';
import { FIXTURES, PYTHON, canThrottle, startCli, torchMissing } from './helpers.js';

/**
 * A checkpoint that dominates: test/fixtures/checkpoint-train.py saves 16 MiB
 * with torch.save and fsyncs it every 5 iterations of a 50 ms step. Profiled
 * unthrottled, then validate --write-bw holds every disk's writes to 40 MB/s
 * (0.42 s a save against 0.25 s of steps), and the same job is run without
 * the tool under a write throttle made here by hand: whatif --write-bw's
 * iteration time against that run's own meter (issue 21: within 15%).
 */
const SCRIPT = join(FIXTURES, 'checkpoint-train.py');
const RATE = 40e6;
const SAVE_MB = 16;
/** Iterations of validate's run and of the run without the tool: 20 saves each. */
const ITERATIONS = '100';
const work = mkdtempSync(join(tmpdir(), 'dsa-e2e-write-'));
const data = join(work, 'data');
const job = ['--save-every', '5', '--save-mb', String(SAVE_MB), '--fsync'];

let skipReason: string | null = null;
let device: string | null = null;
before(async () => {
  skipReason = await torchMissing();
  if (skipReason) return;
  if (process.getuid?.() !== 0) return void (skipReason = 'needs root: the write throttle is a cgroup');
  const throttle = await canThrottle();
  if (throttle) return void (skipReason = `needs a writable blkio/io cgroup controller: ${throttle}`);
  device = await wholeDiskDevice(work);
  if (!device) return void (skipReason = `${work} is not on a disk a write throttle can hold (tmpfs?)`);
  mkdirSync(data, { recursive: true });
  // 160 files of 64 KiB: 20 batches of 8 an epoch.
  for (let i = 0; i < 160; i++) writeFileSync(join(data, `f${String(i).padStart(4, '0')}.bin`), Buffer.alloc(65536, i));
});

/**
 * The job without ds-analyzer, its writes to `device` held to `rate` by a cgroup made here (not the tool's): its
 * iteration time by its own meter.
 */
async function plainRunThrottled(dir: string, rate: number): Promise<{ iterMs: number; perSaveMs: number }> {
  mkdirSync(dir, { recursive: true });
  const io = detectCgroups().controllers.io;
  const group = join(io.parentDir!, `dsa-e2e-plain-${process.pid}`);
  mkdirSync(group);
  try {
    if (io.version === 'v1') writeFileSync(join(group, 'blkio.throttle.write_bps_device'), `${device} ${rate}`);
    else writeFileSync(join(group, 'io.max'), `${device} wbps=${rate}`);
    const script = `echo $$ > "$1/cgroup.procs" && shift && exec "$@"`;
    await execa(
      'sh',
      [
        '-c',
        script,
        'sh',
        group,
        PYTHON,
        SCRIPT,
        '--data',
        data,
        '--meter',
        join(dir, 'meter.json'),
        '--iterations',
        ITERATIONS,
        ...job,
      ],
      { cwd: dir },
    );
  } finally {
    rmdirSync(group);
  }
  const meter = JSON.parse(readFileSync(join(dir, 'meter.json'), 'utf8')) as { batches: number[]; saves: number[] };
  const b = meter.batches;
  return {
    iterMs: (1000 * (b[b.length - 1] - b[5])) / (b.length - 6),
    perSaveMs: (1000 * meter.saves.reduce((a, x) => a + x, 0)) / meter.saves.length,
  };
}

test('validate --write-bw: synced saves held to 40 MB/s against whatif --write-bw, and whatif against the job run there without the tool', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const dir = join(work, 'profiled');
  mkdirSync(dir, { recursive: true });
  const profile = join(dir, 'profile.json');
  const quick = ['--precision', '5%', '--min-iterations', '40', '--max-iterations', '200', '--single-pass'];
  const profiled = await startCli(
    [
      'profile',
      '--data',
      data,
      '--out',
      profile,
      ...quick,
      '--',
      PYTHON,
      SCRIPT,
      '--data',
      data,
      '--meter',
      join(dir, 'meter.json'),
      ...job,
    ],
    { cwd: dir },
  );
  assert.equal(profiled.exitCode, ExitCode.Ok, profiled.all);

  const validated = await startCli(
    [
      'validate',
      profile,
      '--write-bw',
      '40MB/s',
      '--no-control',
      '--max-iterations',
      ITERATIONS,
      '--precision',
      '5%',
      '--json',
    ],
    { cwd: dir },
  );
  assert.equal(validated.exitCode, ExitCode.Ok, validated.all);
  assert.doesNotMatch(validated.all, /^\s+at .+\(.+:\d+:\d+\)$/m, 'no stack trace');
  const output = JSON.parse(validated.stdout) as ValidateOutput;
  const [point] = output.results;
  assert.deepEqual(point.point, { kind: 'write', bytesPerSec: RATE });
  const c = point.checkpoint!;
  assert.ok(
    c.devices.some((d) => d.endsWith(`(${device})`)),
    `the working folder's disk ${device} among ${c.devices.join(', ')}`,
  );
  assert.equal(c.synced, true);
  assert.equal(point.status, 'measured', point.note);

  const whatif = await startCli(['whatif', profile, '--checkpoint-every', '5', '--write-bw', '40MB/s', '--json'], {
    cwd: dir,
  });
  assert.equal(whatif.exitCode, ExitCode.Ok, whatif.all);
  const predictedIterMs = (JSON.parse(whatif.stdout) as { pipeline: { prediction: { iterMs: number } } }).pipeline
    .prediction.iterMs;
  const plain = await plainRunThrottled(join(work, 'plain'), RATE);

  t.diagnostic(
    `at 40 MB/s: iteration predicted ${predictedIterMs.toFixed(1)} ms (whatif), ${c.predictedIterMs.toFixed(1)} (validate's prediction), ` +
      `validate measured ${c.measuredIterMs?.toFixed(1)}, without the tool ${plain.iterMs.toFixed(1)} ms; ` +
      `a save predicted ${c.predictedPerSaveMs.toFixed(0)} ms, validate measured ${c.measuredPerSaveMs?.toFixed(0)}, without the tool ${plain.perSaveMs.toFixed(0)}; ` +
      `stall ${c.predictedStallMsPerIter.toFixed(1)} vs ${c.measuredStallMsPerIter?.toFixed(1)} ms/iter`,
  );
  // The checkpoint dominates: a save takes longer than its 5 steps.
  assert.ok(
    plain.perSaveMs > 0.8 * ((SAVE_MB * 2 ** 20) / RATE) * 1000,
    `the plain run's saves were held: ${plain.perSaveMs.toFixed(0)} ms`,
  );
  assert.ok(
    Math.abs(predictedIterMs - plain.iterMs) <= 0.15 * plain.iterMs,
    `whatif ${predictedIterMs.toFixed(1)} ms vs ${plain.iterMs.toFixed(1)} ms without the tool`,
  );
  // validate's own comparison: the stall and the iteration within the same bound.
  assert.equal(c.stallWithinTolerance, true, point.note);
  assert.ok(
    Math.abs(c.predictedIterMs - c.measuredIterMs!) <= 0.15 * c.measuredIterMs!,
    `validate: ${c.predictedIterMs} vs ${c.measuredIterMs} ms`,
  );
});
