import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { EventWriter, StopFile, eventsFilePath, fromEnv, readProtocolEnv } from '../../src/protocol/writer.js';
import { EventSchema, MAX_ITERATION_MS, type JobEvent } from '../../src/schema/events.js';
import { ExitCode, UserError } from '../../src/errors.js';

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'dsa-writer-'));
}

function readEvents(path: string): JobEvent[] {
  const text = readFileSync(path, 'utf8');
  if (text === '') return [];
  assert.ok(text.endsWith('\n'), 'the file ends with a complete line');
  return text
    .trimEnd()
    .split('\n')
    .map((line) => EventSchema.parse(JSON.parse(line)));
}

/** A clock the test moves by hand. */
function fakeClock(startMs = 1_700_000_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = startMs;
  return { now: () => t, advance: (ms) => (t += ms) };
}

test('start, iter and end events parse with EventSchema and carry what was written', () => {
  const dir = tempDir();
  try {
    const writer = EventWriter.open({
      dir,
      mode: 'cached',
      rank: 2,
      worldSize: 4,
      pid: 4242,
      batchSize: 8,
      workers: 3,
      source: 'manual',
    });
    assert.equal(writer.path, join(dir, 'events-2-4242.jsonl'));
    writer.iter(0, 12.5, 30.25, 8, 1024);
    writer.iter(1, 0, 31, 7);
    writer.end('budget', 2);
    const events = readEvents(writer.path);
    assert.deepEqual(
      events.map((e) => e.type),
      ['start', 'iter', 'iter', 'end'],
    );
    const [start, first, second, end] = events;
    assert.equal(start.type, 'start');
    if (start.type === 'start') {
      assert.equal(start.pid, 4242);
      assert.equal(start.mode, 'cached');
      assert.equal(start.worldSize, 4);
      assert.equal(start.batchSize, 8);
      assert.equal(start.workers, 3);
      assert.equal(start.source, 'manual');
    }
    assert.deepEqual(
      { ...first, t: 0 },
      { v: 1, type: 'iter', t: 0, rank: 2, i: 0, waitMs: 12.5, computeMs: 30.25, samples: 8, bytes: 1024 },
    );
    assert.equal(second.type === 'iter' && second.bytes, undefined);
    assert.deepEqual({ ...end, t: 0 }, { v: 1, type: 'end', t: 0, rank: 2, reason: 'budget', iterations: 2 });
    for (let k = 1; k < events.length; k++) assert.ok(events[k].t >= events[k - 1].t, 'timestamps do not go back');
    // Wall clock in ms since the epoch: within a minute of Date.now().
    assert.ok(Math.abs(start.t - Date.now()) < 60_000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('checkpoint and epoch events parse with EventSchema; a value the schema rejects throws', () => {
  const dir = tempDir();
  try {
    const writer = EventWriter.open({ dir, mode: 'synthetic', rank: 1, pid: 31, flushOnExit: false });
    writer.epoch({
      epoch: 0,
      i: 0,
      createMs: 812.5,
      firstWaitMs: 40.25,
      epochIterations: 5,
      workers: 2,
      persistentWorkers: true,
    });
    writer.iter(0, 40.25, 10, 8);
    writer.checkpoint({
      i: 1,
      inStep: true,
      api: 'torch.save',
      blockingMs: 12.5,
      syncMs: 3,
      bytes: 4096,
      persisted: false,
      note: 'scratch',
    });
    assert.deepEqual(
      readEvents(writer.path).map((e) => e.type),
      ['start', 'epoch', 'iter', 'checkpoint'],
      'a checkpoint is written at once, with what was buffered before it',
    );
    writer.checkpoint({
      i: 1,
      inStep: false,
      api: 'dcp.async_save',
      blockingMs: 2,
      writeMs: null,
      bytes: null,
      persisted: true,
    });
    writer.epoch({ epoch: 1, i: 5, createMs: 0.5, firstWaitMs: 1, gapMs: 250, epochIterations: null });
    writer.end('budget', 6);
    const events = readEvents(writer.path);
    const [epoch0, , save, asyncSave, epoch1] = events.slice(1);
    assert.deepEqual(
      { ...epoch0, t: 0 },
      {
        v: 1,
        type: 'epoch',
        t: 0,
        rank: 1,
        epoch: 0,
        i: 0,
        createMs: 812.5,
        firstWaitMs: 40.25,
        epochIterations: 5,
        workers: 2,
        persistentWorkers: true,
      },
    );
    assert.deepEqual(
      { ...save, t: 0 },
      {
        v: 1,
        type: 'checkpoint',
        t: 0,
        rank: 1,
        i: 1,
        inStep: true,
        api: 'torch.save',
        blockingMs: 12.5,
        syncMs: 3,
        bytes: 4096,
        persisted: false,
        note: 'scratch',
      },
    );
    assert.ok(
      asyncSave.type === 'checkpoint' &&
        asyncSave.writeMs === null &&
        asyncSave.bytes === null &&
        asyncSave.syncMs === 0,
      'syncMs defaults to 0',
    );
    assert.ok(epoch1.type === 'epoch' && epoch1.gapMs === 250 && epoch1.epochIterations === null);

    const other = EventWriter.open({ dir, mode: 'cold', pid: 32, flushOnExit: false });
    assert.throws(
      () => other.checkpoint({ i: -1, inStep: false, api: 'manual', blockingMs: 1, bytes: 0, persisted: true }),
      /checkpoint: i:/,
    );
    assert.throws(
      () => other.checkpoint({ i: 0, inStep: false, api: 'manual', blockingMs: Number.NaN, bytes: 0, persisted: true }),
      RangeError,
    );
    assert.throws(() => other.epoch({ epoch: 0, i: 0, createMs: 1, firstWaitMs: -1 }), /epoch: firstWaitMs:/);
    other.end('budget', 0);
    assert.deepEqual(
      readEvents(other.path).map((e) => e.type),
      ['start', 'end'],
      'nothing of a rejected event is written',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('iter lines round-trip any value the schema accepts exactly', () => {
  const dir = tempDir();
  try {
    // Up to the schema's limit of a day per wait or compute: beyond it a line is bad by design.
    const value = fc.double({ min: 0, max: MAX_ITERATION_MS, noNaN: true, noDefaultInfinity: true });
    const row = fc.record({
      waitMs: value,
      computeMs: value,
      samples: fc.nat(1_000_000),
      bytes: fc.option(fc.nat(Number.MAX_SAFE_INTEGER), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(row, { minLength: 1, maxLength: 20 }), (rows) => {
        const writer = EventWriter.open({ dir, mode: 'synthetic', pid: 1, flushOnExit: false });
        rows.forEach((r, i) => writer.iter(i, r.waitMs, r.computeMs, r.samples, r.bytes));
        writer.end('stop-file', rows.length);
        const iters = readEvents(writer.path).filter((e) => e.type === 'iter');
        rmSync(writer.path);
        assert.equal(iters.length, rows.length);
        iters.forEach((e, i) => {
          assert.equal(e.type, 'iter');
          if (e.type !== 'iter') return;
          assert.equal(e.i, i);
          // -0 is written as 0.
          assert.equal(e.waitMs, rows[i].waitMs + 0);
          assert.equal(e.computeMs, rows[i].computeMs + 0);
          assert.equal(e.samples, rows[i].samples);
          assert.equal(e.bytes, rows[i].bytes);
        });
      }),
      { numRuns: 100 },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('negative times are written as 0; non-finite values and bad indices throw', () => {
  const dir = tempDir();
  try {
    const writer = EventWriter.open({ dir, mode: 'cold', pid: 7, flushOnExit: false });
    writer.iter(0, -0.001, -3, 1, -5);
    assert.throws(() => writer.iter(1, Number.NaN, 1, 1), RangeError);
    assert.throws(() => writer.iter(1, 1, Number.POSITIVE_INFINITY, 1), RangeError);
    assert.throws(() => writer.iter(1, 1, 1, 1, Number.NaN), RangeError);
    assert.throws(() => writer.iter(-1, 1, 1, 1), RangeError);
    assert.throws(() => writer.iter(1, 1, 1, 1.5), RangeError);
    writer.end('error', 1);
    const iter = readEvents(writer.path)[1];
    assert.ok(iter.type === 'iter');
    if (iter.type === 'iter') {
      assert.equal(iter.waitMs, 0);
      assert.equal(iter.computeMs, 0);
      assert.equal(iter.bytes, 0);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('iter lines are buffered and written after the flush interval or when the buffer is large', () => {
  const dir = tempDir();
  try {
    const clock = fakeClock();
    const writer = EventWriter.open({
      dir,
      mode: 'cached',
      pid: 9,
      clock: clock.now,
      flushIntervalMs: 100,
      maxBufferChars: 2000,
      flushOnExit: false,
    });
    const count = (): number => readEvents(writer.path).length;
    assert.equal(count(), 1, 'the start event is written at once');
    writer.iter(0, 1, 2, 3);
    clock.advance(50);
    writer.iter(1, 1, 2, 3);
    assert.equal(count(), 1, 'iterations within the interval stay in memory');
    clock.advance(50);
    writer.iter(2, 1, 2, 3);
    assert.equal(count(), 4, 'the interval elapsed: everything buffered is written');
    // No time passes: only the buffer size forces a write (lines are about 100 characters).
    for (let i = 3; i < 40; i++) writer.iter(i, 1, 2, 3);
    const written = count();
    assert.ok(written > 4 && written < 41, `a full buffer is written (${written} lines on disk)`);
    writer.flush();
    assert.equal(count(), 41);
    writer.end('budget', 40);
    assert.equal(count(), 42);
    writer.iter(40, 1, 2, 3);
    writer.end('budget', 41);
    assert.equal(count(), 42, 'calls after end() write nothing');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('close() flushes without an end event', () => {
  const dir = tempDir();
  try {
    const writer = EventWriter.open({ dir, mode: 'cached', pid: 10, flushOnExit: false });
    writer.iter(0, 1, 2, 3);
    writer.close();
    assert.deepEqual(
      readEvents(writer.path).map((e) => e.type),
      ['start', 'iter'],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('fromEnv returns null without DSA_MODE and a writer named after RANK and the pid with it', () => {
  const dir = tempDir();
  try {
    assert.equal(fromEnv({ DSA_EVENTS_DIR: dir }), null);
    assert.equal(fromEnv({ DSA_MODE: '', DSA_EVENTS_DIR: dir }), null);
    assert.deepEqual(readdirSync(dir), [], 'no file is created for an unprofiled job');
    const writer = fromEnv(
      { DSA_MODE: 'synthetic', DSA_EVENTS_DIR: dir, RANK: '3', WORLD_SIZE: '8' },
      { batchSize: 16, source: 'emulator' },
    );
    assert.ok(writer);
    assert.equal(writer.path, eventsFilePath(dir, 3, process.pid));
    writer.end('budget', 0);
    const [start, end] = readEvents(writer.path);
    assert.ok(
      start.type === 'start' &&
        start.mode === 'synthetic' &&
        start.worldSize === 8 &&
        start.rank === 3 &&
        start.batchSize === 16,
    );
    assert.ok(end.type === 'end' && end.iterations === 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('fromEnv and readProtocolEnv reject malformed variables with a UserError', () => {
  const expectUserError = (fn: () => unknown, pattern: RegExp, code: ExitCode): void => {
    assert.throws(
      fn,
      (error: unknown) => error instanceof UserError && pattern.test(error.message) && error.exitCode === code,
    );
  };
  expectUserError(
    () => fromEnv({ DSA_MODE: 'warm', DSA_EVENTS_DIR: '/tmp' }),
    /DSA_MODE='warm'.*synthetic, cached or cold/,
    ExitCode.BadValue,
  );
  expectUserError(() => fromEnv({ DSA_MODE: 'cold' }), /DSA_EVENTS_DIR is not/, ExitCode.Usage);
  expectUserError(() => readProtocolEnv({ DSA_ITERATIONS: '0' }), /DSA_ITERATIONS='0'/, ExitCode.BadValue);
  expectUserError(() => readProtocolEnv({ DSA_ITERATIONS: '2.5' }), /DSA_ITERATIONS/, ExitCode.BadValue);
  expectUserError(() => readProtocolEnv({ RANK: '-1' }), /RANK='-1'/, ExitCode.BadValue);
  expectUserError(() => readProtocolEnv({ DSA_PROTOCOL: '2' }), /DSA_PROTOCOL='2'.*version 1/, ExitCode.BadValue);
  assert.deepEqual(
    readProtocolEnv({ DSA_ITERATIONS: '30', DSA_STOP_FILE: '/x/stop', DSA_SYNC: '1', DSA_PROTOCOL: '1' }),
    {
      mode: undefined,
      eventsDir: undefined,
      iterations: 30,
      stopFile: '/x/stop',
      sync: true,
      rank: 0,
      worldSize: 1,
      nodeRank: 0,
    },
  );
});

test("the start event names the node: the launcher's node rank (GROUP_RANK, then NODE_RANK, then SLURM_NODEID) and the host name", () => {
  assert.equal(readProtocolEnv({}).nodeRank, 0, 'one node without a launcher: node 0');
  assert.equal(readProtocolEnv({ SLURM_NODEID: '3' }).nodeRank, 3);
  assert.equal(readProtocolEnv({ NODE_RANK: '2', SLURM_NODEID: '3' }).nodeRank, 2);
  assert.equal(
    readProtocolEnv({ GROUP_RANK: '1', NODE_RANK: '2', SLURM_NODEID: '3' }).nodeRank,
    1,
    "torchrun's agent rank comes first",
  );
  assert.equal(readProtocolEnv({ GROUP_RANK: '', NODE_RANK: '2' }).nodeRank, 2, 'an empty variable counts as unset');
  assert.throws(
    () => readProtocolEnv({ GROUP_RANK: 'node-1' }),
    (error: unknown) =>
      error instanceof UserError && /GROUP_RANK='node-1'/.test(error.message) && error.exitCode === ExitCode.BadValue,
  );

  const dir = tempDir();
  try {
    const writer = fromEnv(
      { DSA_MODE: 'cold', DSA_EVENTS_DIR: dir, RANK: '5', NODE_RANK: '1' },
      {},
      { pid: 11, flushOnExit: false },
    );
    writer!.end('budget', 0);
    const [start] = readEvents(writer!.path);
    assert.ok(start.type === 'start');
    if (start.type === 'start') assert.deepEqual([start.rank, start.nodeRank, start.hostname], [5, 1, hostname()]);

    const named = EventWriter.open({
      dir,
      mode: 'cold',
      pid: 12,
      hostname: 'n'.repeat(300),
      nodeRank: 4,
      flushOnExit: false,
    });
    named.end('budget', 0);
    const [own] = readEvents(named.path);
    assert.ok(own.type === 'start');
    if (own.type === 'start')
      assert.deepEqual(
        [own.nodeRank, own.hostname?.length],
        [4, 255],
        'a host name past 255 characters is cut, not a bad line',
      );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('StopFile looks at the file system at most once per interval and stays stopped', () => {
  const dir = tempDir();
  try {
    const path = join(dir, 'stop');
    let now = 0;
    const stop = new StopFile(path, 100, () => now);
    assert.equal(stop.requested(), false, 'the first call looks at once');
    writeFileSync(path, '');
    now = 99;
    assert.equal(stop.requested(), false, 'within the interval the file is not looked at');
    now = 100;
    assert.equal(stop.requested(), true);
    rmSync(path);
    now = 500;
    assert.equal(stop.requested(), true, 'a stop request is not taken back');
    assert.equal(new StopFile(undefined).requested(), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
