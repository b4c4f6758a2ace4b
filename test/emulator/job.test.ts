import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { generateDataset, listDatasetFiles } from '../../src/emulator/generate-dataset.js';
import { planEpoch } from '../../src/emulator/loader.js';
import { EventSchema, type EndEvent, type IterEvent, type JobEvent, type StartEvent } from '../../src/schema/events.js';

const JOB = fileURLToPath(new URL('../../src/emulator/job.js', import.meta.url));
const BASE_ARGS = ['--compute-ms', '5', '--prep-ms', '2', '--workers', '2', '--batch-size', '4'];
const FILES = 32;

let root: string;
let data: string;
let sizes: number[];

before(async () => {
  root = mkdtempSync(join(tmpdir(), 'dsa-job-'));
  data = join(root, 'data');
  await generateDataset(data, { files: FILES, fileBytes: 64 * 1024, seed: 1 });
  sizes = listDatasetFiles(data).map((f) => statSync(f).size);
});

after(() => rmSync(root, { recursive: true, force: true }));

let runs = 0;
function freshDir(name: string): string {
  return join(root, `${name}-${runs++}`);
}

/** The environment of the test without any DSA_ variable, plus `extra`. */
function jobEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('DSA_') && key !== 'RANK' && key !== 'WORLD_SIZE') env[key] = value;
  }
  return { ...env, ...extra };
}

function startJob(
  args: string[],
  extra: Record<string, string>,
): ResultPromise<{ reject: false; extendEnv: false; env: Record<string, string> }> {
  return execa('node', [JOB, '--data', data, ...args], {
    reject: false,
    extendEnv: false,
    env: jobEnv(extra),
    timeout: 120_000,
  });
}

interface Events {
  start: StartEvent;
  iters: IterEvent[];
  end: EndEvent | undefined;
  all: JobEvent[];
}

function readEvents(dir: string): Events {
  const names = readdirSync(dir);
  assert.equal(names.length, 1, `one events file per process (found ${names.join(', ')})`);
  assert.match(names[0], /^events-0-\d+\.jsonl$/);
  const all = readFileSync(join(dir, names[0]), 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => EventSchema.parse(JSON.parse(line)));
  const start = all[0];
  assert.equal(start.type, 'start');
  const last = all[all.length - 1];
  return {
    start: start as StartEvent,
    iters: all.filter((e): e is IterEvent => e.type === 'iter'),
    end: last.type === 'end' ? last : undefined,
    all,
  };
}

async function waitForIterations(dir: string, count: number): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    if (existsSync(dir)) {
      const names = readdirSync(dir);
      if (names.length > 0) {
        const lines = readFileSync(join(dir, names[0]), 'utf8').split('\n');
        if (lines.filter((l) => l.includes('"type":"iter"')).length >= count) return;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the job wrote fewer than ${count} iterations in 30 s`);
}

const sum = (values: number[]): number => values.reduce((a, b) => a + b, 0);

test('cached mode: 30 iterations within budget, every epoch reads every file once', async () => {
  const events = freshDir('events');
  const job = startJob(BASE_ARGS, { DSA_MODE: 'cached', DSA_EVENTS_DIR: events, DSA_ITERATIONS: '30' });
  const result = await job;
  assert.equal(result.exitCode, 0, result.stderr);
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
  const { start, iters, end, all } = readEvents(events);
  assert.equal(start.mode, 'cached');
  assert.equal(start.batchSize, 4);
  assert.equal(start.workers, 2);
  assert.equal(start.source, 'emulator');
  assert.equal(start.pid, job.pid);
  assert.equal(iters.length, 30);
  assert.deepEqual(
    iters.map((e) => e.i),
    Array.from({ length: 30 }, (_, i) => i),
  );
  assert.deepEqual(end && { reason: end.reason, iterations: end.iterations }, { reason: 'budget', iterations: 30 });
  assert.equal(all.length, 32);
  for (const e of iters) {
    assert.ok(e.computeMs >= 5, `iteration ${e.i}: computeMs ${e.computeMs}`);
    assert.ok(e.waitMs >= 0);
    assert.equal(e.samples, 4);
  }
  // 32 files in batches of 4: 8 iterations per epoch, each epoch its own permutation of all files.
  const perEpoch = FILES / 4;
  for (let epoch = 0; epoch < 3; epoch++) {
    const epochIters = iters.slice(epoch * perEpoch, (epoch + 1) * perEpoch);
    const plan = planEpoch(FILES, 4, 1, epoch);
    assert.deepEqual(
      epochIters.map((e) => e.bytes),
      plan.map((batch) => sum(batch.map((f) => sizes[f]))),
      `epoch ${epoch}: bytes of each batch`,
    );
  }
  assert.match(result.stdout, /emulated job: 30 iterations \(budget\), 120 samples/);
});

test('--iterations overrides DSA_ITERATIONS', async () => {
  const events = freshDir('events');
  const result = await startJob([...BASE_ARGS, '--iterations', '5'], {
    DSA_MODE: 'cold',
    DSA_EVENTS_DIR: events,
    DSA_ITERATIONS: '30',
  });
  assert.equal(result.exitCode, 0, result.stderr);
  const { iters, end } = readEvents(events);
  assert.equal(iters.length, 5);
  assert.equal(end?.reason, 'budget');
});

test('a prep-bound job waits for its workers; synthetic mode reads one batch and then only computes', async () => {
  // prep 20 ms x 4 samples per batch on 2 workers: at least 40 ms per iteration on average.
  const args = ['--compute-ms', '5', '--prep-ms', '20', '--workers', '2', '--batch-size', '4'];
  const cachedDir = freshDir('events');
  const syntheticDir = freshDir('events');
  const cached = await startJob(args, { DSA_MODE: 'cached', DSA_EVENTS_DIR: cachedDir, DSA_ITERATIONS: '16' });
  const synthetic = await startJob(args, { DSA_MODE: 'synthetic', DSA_EVENTS_DIR: syntheticDir, DSA_ITERATIONS: '30' });
  assert.equal(cached.exitCode, 0, cached.stderr);
  assert.equal(synthetic.exitCode, 0, synthetic.stderr);

  const real = readEvents(cachedDir).iters;
  const realMs = sum(real.map((e) => e.waitMs + e.computeMs));
  assert.ok(realMs >= 0.9 * 16 * 40, `cached: ${realMs.toFixed(0)} ms for 16 iterations, prep alone needs 640 ms`);

  const { start, iters, end } = readEvents(syntheticDir);
  assert.equal(start.mode, 'synthetic');
  assert.equal(iters.length, 30);
  assert.equal(end?.reason, 'budget');
  const firstBatch = planEpoch(FILES, 4, 1, 0)[0];
  assert.equal(iters[0].bytes, sum(firstBatch.map((f) => sizes[f])), 'the first batch is read from its files');
  assert.equal(sum(iters.map((e) => e.bytes ?? 0)), iters[0].bytes, 'replayed batches read nothing');
  assert.ok(iters.every((e) => e.samples === 4 && e.computeMs >= 5));
  const replayWaitMs = sum(iters.slice(1).map((e) => e.waitMs)) / (iters.length - 1);
  assert.ok(
    replayWaitMs < 10,
    `a replayed batch does not wait for the loader (mean wait ${replayWaitMs.toFixed(2)} ms)`,
  );
});

// The job's CRASH_EXIT_CODE (importing job.js would run the job).
const CRASH_EXIT_CODE = 42;

test('--crash-at-iteration exits 42 after writing that many iterations; --crash-mode and --hang-mode limit them to one mode', async () => {
  const events = freshDir('events');
  const crashed = await startJob([...BASE_ARGS, '--crash-at-iteration', '5'], {
    DSA_MODE: 'cached',
    DSA_EVENTS_DIR: events,
    DSA_ITERATIONS: '30',
  });
  assert.equal(crashed.exitCode, CRASH_EXIT_CODE);
  assert.match(crashed.stderr, /crashing after 5 iterations/);
  const { iters, end } = readEvents(events);
  assert.equal(iters.length, 5, 'iterations before the crash are flushed');
  assert.equal(end, undefined, 'no end event after a crash');

  const otherMode = freshDir('events');
  const spared = await startJob(
    [
      ...BASE_ARGS,
      '--crash-at-iteration',
      '5',
      '--crash-mode',
      'cold',
      '--hang-at-iteration',
      '3',
      '--hang-mode',
      'synthetic',
    ],
    {
      DSA_MODE: 'cached',
      DSA_EVENTS_DIR: otherMode,
      DSA_ITERATIONS: '10',
    },
  );
  assert.equal(spared.exitCode, 0, spared.stderr);
  assert.equal(readEvents(otherMode).end?.reason, 'budget');
});

test('the stop file ends the job cleanly with reason stop-file', async () => {
  const events = freshDir('events');
  const stopFile = join(root, `stop-${runs++}`);
  const job = startJob(BASE_ARGS, {
    DSA_MODE: 'cached',
    DSA_EVENTS_DIR: events,
    DSA_ITERATIONS: '1000000',
    DSA_STOP_FILE: stopFile,
  });
  await waitForIterations(events, 3);
  writeFileSync(stopFile, '');
  const result = await job;
  assert.equal(result.exitCode, 0, result.stderr);
  const { iters, end } = readEvents(events);
  assert.equal(end?.reason, 'stop-file');
  assert.equal(end?.iterations, iters.length);
  assert.ok(iters.length >= 3 && iters.length < 1_000_000);
});

for (const mode of ['cold', 'synthetic']) {
  test(`SIGTERM flushes the iterations and exits 143 (${mode} mode)`, async () => {
    const events = freshDir('events');
    const job = startJob(BASE_ARGS, { DSA_MODE: mode, DSA_EVENTS_DIR: events, DSA_ITERATIONS: '1000000' });
    await waitForIterations(events, 3);
    job.kill('SIGTERM');
    const result = await job;
    assert.equal(result.exitCode, 143);
    const { iters, end } = readEvents(events);
    assert.ok(iters.length >= 3);
    assert.equal(end, undefined);
  });
}

test('--hang-at-iteration stops iterating and waits, deaf to the stop file, until a signal ends it', async () => {
  const events = freshDir('events');
  const stopFile = join(root, `stop-${runs++}`);
  const job = startJob([...BASE_ARGS, '--hang-at-iteration', '4', '--hang-mode', 'cached'], {
    DSA_MODE: 'cached',
    DSA_EVENTS_DIR: events,
    DSA_ITERATIONS: '1000000',
    DSA_STOP_FILE: stopFile,
  });
  let exited = false;
  void job.finally(() => (exited = true));
  await waitForIterations(events, 4);
  writeFileSync(stopFile, '');
  // The stop file is looked at every few hundred ms at most: a job still iterating would have ended by now.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  assert.equal(exited, false, 'the hung job is still running');
  job.kill('SIGTERM');
  const result = await job;
  assert.equal(result.exitCode, 143);
  assert.match(result.stderr, /hanging after 4 iterations/);
  const { iters, end } = readEvents(events);
  assert.equal(iters.length, 4, 'no iteration after the hang');
  assert.equal(end, undefined);
});

test('without DSA_MODE the job runs one epoch unprofiled and prints a summary', async () => {
  const events = freshDir('events');
  const result = await startJob(BASE_ARGS, { DSA_EVENTS_DIR: events });
  assert.equal(result.exitCode, 0, result.stderr);
  assert.match(
    result.stdout,
    /emulated job: 8 iterations \(exhausted\), 32 samples, [\d.]+ (B|KiB|MiB|GiB) read .*\(unprofiled\)/,
  );
  assert.equal(existsSync(events), false, 'no events are written');
});

test('bad options and environment fail with a one-line message and no stack trace', async () => {
  const badFlag = await startJob(['--batch-size', 'zero'], {});
  assert.equal(badFlag.exitCode, 2);
  assert.match(badFlag.stderr, /--batch-size/);
  const badMode = await startJob(BASE_ARGS, { DSA_MODE: 'warm', DSA_EVENTS_DIR: freshDir('events') });
  assert.equal(badMode.exitCode, 3);
  assert.match(badMode.stderr, /DSA_MODE='warm'/);
  const noData = await execa('node', [JOB, '--data', join(root, 'missing')], {
    reject: false,
    env: jobEnv({}),
    extendEnv: false,
  });
  assert.equal(noData.exitCode, 4);
  assert.match(noData.stderr, /does not exist/);
  for (const result of [badFlag, badMode, noData]) assert.doesNotMatch(result.stderr, /\n\s+at /);
});

test('cached mode with DSA_SUBSET_FILE: the job samples only the listed files and says how many it kept', async () => {
  const events = freshDir('events');
  const files = listDatasetFiles(data);
  const kept = [files[1], files[5], files[6], files[20]];
  const list = join(root, `subset-${runs++}.txt`);
  writeFileSync(list, `${kept.join('\n')}\n/elsewhere/not-in-the-dataset.bin\n`);
  const result = await startJob([...BASE_ARGS, '--batch-size', '2'], {
    DSA_MODE: 'cached',
    DSA_EVENTS_DIR: events,
    DSA_ITERATIONS: '10',
    DSA_SUBSET_FILE: list,
  });
  assert.equal(result.exitCode, 0, result.stderr);
  const { start, iters } = readEvents(events);
  assert.equal(start.subsetFiles, 4);
  assert.equal(start.subsetNote, 'kept 4 of 32 files');
  // Each epoch of 2 batches is a permutation of the 4 kept files only.
  const keptBytes = kept.map((f) => statSync(f).size);
  for (let epoch = 0; epoch < 5; epoch++) {
    const plan = planEpoch(4, 2, 1, epoch);
    assert.deepEqual(
      iters.slice(epoch * 2, epoch * 2 + 2).map((e) => e.bytes),
      plan.map((batch) => sum(batch.map((f) => keptBytes[f]))),
    );
  }

  // Other modes ignore it; an unreadable list leaves the dataset whole and says why.
  const cold = freshDir('events');
  await startJob(BASE_ARGS, { DSA_MODE: 'cold', DSA_EVENTS_DIR: cold, DSA_ITERATIONS: '2', DSA_SUBSET_FILE: list });
  assert.equal(readEvents(cold).start.subsetFiles, undefined);
  const missing = freshDir('events');
  await startJob(BASE_ARGS, {
    DSA_MODE: 'cached',
    DSA_EVENTS_DIR: missing,
    DSA_ITERATIONS: '2',
    DSA_SUBSET_FILE: join(root, 'no-such-list'),
  });
  assert.equal(readEvents(missing).start.subsetFiles, undefined);
  assert.match(readEvents(missing).start.subsetNote ?? '', /cannot read .*no-such-list: ENOENT/);
});
