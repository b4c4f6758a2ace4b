import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { chromeTrace, type TraceEvent } from '../../src/export/chrome-trace.js';
import { iterationsCsv } from '../../src/export/csv.js';
import { ITERATION_COLUMNS, iterationRows, type IterationRow } from '../../src/export/iteration-rows.js';
import { crc32c, maskedCrc32c, tfRecord } from '../../src/export/tfrecord.js';
import { tensorBoardRuns } from '../../src/export/tensorboard.js';
import { defaultExportPath, writeExport } from '../../src/export/write-export.js';
import type { Profile } from '../../src/schema/profile.js';
import { readProfile } from '../../src/store/profile-store.js';
import { fakeIo, expectOneLineError } from '../cli/fake-io.js';

const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/profiles/', import.meta.url));
const QUICK = join(FIXTURES, 'emulated-quick.json');
const POOLED = join(FIXTURES, 'remote-latency.json');
const READER = fileURLToPath(new URL('../../../test/export/read-tfevents.py', import.meta.url));
const PACKAGE_DIR = fileURLToPath(new URL('../../../python', import.meta.url));
const PYTHON = '/usr/bin/python3';

/**
 * The quick profile with what it lacks: two epoch starts and saves on its cold
 * rank (two in one step, one between epochs), and a second rank on another node.
 */
function withEvents(): Profile {
  const profile = structuredClone(readProfile(QUICK));
  const cold = profile.modes.cold!;
  const rank = cold.ranks[0];
  rank.epochs = [
    { t: 0, epoch: 0, i: 0, createMs: 40, firstWaitMs: rank.iterations[0].waitMs },
    { t: 0, epoch: 1, i: 100, createMs: 35, firstWaitMs: rank.iterations[100].waitMs, gapMs: 3 },
  ];
  rank.checkpoints = [
    { t: 0, i: 50, inStep: true, api: 'torch.save', blockingMs: 6, syncMs: 1, bytes: 1000, persisted: true },
    { t: 0, i: 50, inStep: true, api: 'torch.save', blockingMs: 2.5, syncMs: 0, bytes: 1000, persisted: true },
    { t: 0, i: 100, inStep: false, api: 'manual', blockingMs: 9, syncMs: 0, bytes: null, persisted: true },
  ];
  cold.ranks.push({
    ...structuredClone(rank),
    rank: 1,
    node: { hostname: 'gpu-b', nodeRank: 1 },
    checkpoints: undefined,
    epochs: undefined,
  });
  profile.cpuSweep = [{ ...structuredClone(profile.modes.cached!), cpus: [0, 1] }];
  return profile;
}

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'dsa-export-'));
}

describe('iteration rows', () => {
  test("hold the profile's own iterations and summaries", () => {
    const profile = readProfile(QUICK);
    const rows = iterationRows(profile);
    for (const mode of ['synthetic', 'cached', 'cold'] as const) {
      const rank = profile.modes[mode]!.ranks[0];
      const summary = rank.summary!;
      const mine = rows.filter((r) => r.mode === mode);
      assert.equal(mine.length, rank.iterations.length, mode);
      assert.equal(mine.filter((r) => r.warmup).length, summary.warmupIterations, mode);
      const window = mine.filter((r) => !r.warmup).slice(0, summary.measuredIterations);
      const meanMs = (pick: (r: IterationRow) => number) =>
        (1000 * window.reduce((s, r) => s + pick(r), 0)) / window.length;
      assert.ok(Math.abs(meanMs((r) => r.duration_s) - summary.iterMs.mean) < 1e-6, mode);
      assert.ok(Math.abs(meanMs((r) => r.wait_s) - summary.waitMs.mean) < 1e-6, mode);
      const samples = window.reduce((s, r) => s + r.samples, 0);
      assert.ok(
        Math.abs(samples / ((meanMs((r) => r.duration_s) * window.length) / 1000) - summary.samplesPerSec) < 1e-6,
        mode,
      );
      // t is an iteration's end: the next starts there, never before it.
      const gaps = mine.slice(1).map((r, k) => r.start_s - mine[k].end_s);
      assert.ok(Math.min(...gaps) > -0.001, `${mode}: iterations overlap by ${-Math.min(...gaps)} s`);
      assert.ok([...gaps].sort((a, b) => a - b)[gaps.length >> 1] < 0.001, mode);
    }
    assert.deepEqual(Object.keys(rows[0]).sort(), [...ITERATION_COLUMNS].sort());
    assert.equal(rows[0].node, profile.host.hostname);
  });

  test('number the runs of a pooled mode by when they ran', () => {
    const profile = readProfile(POOLED);
    const rows = iterationRows(profile);
    for (const mode of ['synthetic', 'cached', 'cold'] as const) {
      const passes = profile.modes[mode]!.passes!;
      assert.equal(passes.length, 2);
      passes.forEach((pass, k) => {
        const mine = rows.filter((r) => r.mode === mode && r.run === k + 1);
        assert.ok(mine.length > 0, `${mode} run ${k + 1}`);
        for (const r of mine)
          assert.ok(
            r.end_s * 1000 >= pass.startedAt && r.end_s * 1000 <= pass.startedAt + pass.wallSec * 1000,
            `${mode} ${r.iteration}`,
          );
      });
    }
  });

  test('carry epochs, saves and nodes', () => {
    const rows = iterationRows(withEvents()).filter((r) => r.mode === 'cold');
    const rank0 = new Map(rows.filter((r) => r.rank === 0).map((r) => [r.iteration, r]));
    assert.deepEqual(
      [0, 99, 100, 382].map((i) => rank0.get(i)!.epoch),
      [0, 0, 1, 1],
    );
    assert.deepEqual(
      [...rank0.values()].filter((r) => r.epoch_start).map((r) => r.iteration),
      [0, 100],
    );
    assert.deepEqual([rank0.get(50)!.checkpoint_saves, rank0.get(50)!.checkpoint_s], [2, 0.0085]);
    assert.deepEqual([rank0.get(100)!.checkpoint_before_saves, rank0.get(100)!.checkpoint_before_s], [1, 0.009]);
    const rank1 = rows.filter((r) => r.rank === 1);
    assert.equal(rank1.length, 383);
    assert.ok(
      rank1.every((r) => r.node === 'gpu-b' && r.node_rank === 1 && r.epoch === null && r.checkpoint_saves === 0),
    );
    const all = iterationRows(withEvents());
    assert.deepEqual(
      [...new Set(all.map((r) => `${r.mode} ${r.variant}`))],
      ['synthetic default', 'cached default', 'cold default', 'cached cpus=2'],
    );
  });

  test('as CSV: a header, then each row in the columns’ order', () => {
    const rows = iterationRows(withEvents());
    const lines = iterationsCsv(rows).trimEnd().split('\n');
    assert.equal(lines[0], ITERATION_COLUMNS.join(','));
    assert.equal(lines.length, rows.length + 1);
    const cold50 = rows.findIndex((r) => r.mode === 'cold' && r.rank === 0 && r.iteration === 50);
    const fields = lines[cold50 + 1].split(',');
    const it = withEvents().modes.cold!.ranks[0].iterations[50];
    assert.equal(Number(fields[ITERATION_COLUMNS.indexOf('end_s')]), it.t / 1000);
    assert.equal(Number(fields[ITERATION_COLUMNS.indexOf('wait_s')]), it.waitMs / 1000);
    assert.equal(fields[ITERATION_COLUMNS.indexOf('epoch')], '0');
    assert.equal(fields[ITERATION_COLUMNS.indexOf('checkpoint_s')], '0.0085');
    assert.equal(fields[ITERATION_COLUMNS.indexOf('warmup')], 'false');
    const synthetic = lines[1].split(',');
    assert.equal(synthetic[ITERATION_COLUMNS.indexOf('epoch')], '', 'no epoch: an empty field');
  });
});

describe('chrome trace', () => {
  const trace = chromeTrace(withEvents());
  const events = trace.traceEvents;
  const on = (pid: number, tid: number, name: string) =>
    events.filter((e) => e.pid === pid && e.tid === tid && e.name === name);

  test('absolute µs, said by a zero base time', () => {
    assert.equal(trace.baseTimeNanoseconds, 0);
    assert.deepEqual(Object.keys(JSON.parse(JSON.stringify(trace))).slice(0, 3), [
      'baseTimeNanoseconds',
      'displayTimeUnit',
      'traceEvents',
    ]);
  });

  test('a named process per mode and a thread per rank', () => {
    const names = events.filter((e) => e.name === 'process_name').map((e) => [e.pid, e.args!.name]);
    assert.deepEqual(names, [
      [1, 'ds-analyzer synthetic'],
      [2, 'ds-analyzer cached'],
      [3, 'ds-analyzer cold'],
      [4, 'ds-analyzer cached (cpus=2)'],
    ]);
    const threads = events.filter((e) => e.name === 'thread_name' && e.pid === 3).map((e) => [e.tid, e.args!.name]);
    assert.deepEqual(threads, [
      [0, `rank 0 (${withEvents().host.hostname})`],
      [1, 'rank 1 (gpu-b)'],
    ]);
  });

  test('each iteration at its wall-clock µs, its wait and step inside it', () => {
    const profile = withEvents();
    const iterations = on(3, 0, 'iteration');
    const its = profile.modes.cold!.ranks[0].iterations;
    assert.equal(iterations.length, its.length);
    const waits = on(3, 0, 'data wait');
    const steps = on(3, 0, 'step');
    iterations.forEach((ev, k) => {
      // Each boundary is a whole µs (at 1.8e15 µs a double is good to a quarter µs): within 2 µs of the event's own
      // times.
      assert.equal(ev.ts! + ev.dur!, Math.round(its[k].t * 1000), `iteration ${k} ends at t`);
      assert.ok(Math.abs(ev.dur! - (its[k].waitMs + its[k].computeMs) * 1000) <= 2, `iteration ${k}`);
      assert.equal(waits[k].ts, ev.ts);
      assert.equal(waits[k].ts! + waits[k].dur!, steps[k].ts);
      assert.equal(steps[k].ts! + steps[k].dur!, ev.ts! + ev.dur!);
      assert.ok(Math.abs(waits[k].dur! - its[k].waitMs * 1000) <= 2, `wait ${k}: ${waits[k].dur} µs`);
    });
    assert.equal(
      iterations.filter((e) => e.args!.warmup).length,
      profile.modes.cold!.ranks[0].summary!.warmupIterations,
    );
  });

  test('saves inside their step, and epoch starts before their first wait', () => {
    const saves = on(3, 0, 'checkpoint save (torch.save)');
    const step50 = on(3, 0, 'step')[50];
    assert.deepEqual(
      saves.map((s) => s.dur),
      [6000, 2500],
    );
    assert.ok(saves.every((s) => s.ts! >= step50.ts! && s.ts! + s.dur! <= step50.ts! + step50.dur!));
    const between = on(3, 0, 'checkpoint save (manual)');
    assert.equal(between.length, 1);
    assert.equal(between[0].ts, on(3, 0, 'iteration')[99].ts! + on(3, 0, 'iteration')[99].dur!);
    const loaders = on(3, 0, 'iter(loader)');
    assert.deepEqual(
      loaders.map((e) => [e.dur, e.ts! + e.dur!]),
      [
        [40000, on(3, 0, 'iteration')[0].ts],
        [35000, on(3, 0, 'iteration')[100].ts],
      ],
    );
    assert.deepEqual(
      events.filter((e: TraceEvent) => e.ph === 'i').map((e) => e.name),
      ['epoch 0', 'epoch 1'],
    );
  });
});

describe('tensorboard', () => {
  test('crc32c: the RFC 3720 check value, and the masked form TFRecord writes', () => {
    assert.equal(crc32c(Buffer.from('123456789')), 0xe3069283);
    assert.equal(crc32c(Buffer.alloc(32)), 0x8a9136aa); // RFC 3720 B.4: 32 bytes of zeros
    const record = tfRecord(Buffer.from('abc'));
    assert.equal(record.length, 8 + 4 + 3 + 4);
    assert.equal(record.readUInt32LE(15), maskedCrc32c(Buffer.from('abc')));
  });

  test('a run per mode and rank, and the split', () => {
    assert.deepEqual(
      tensorBoardRuns(readProfile(QUICK)).map((r) => r.dir),
      ['synthetic', 'cached', 'cold', 'split'],
    );
    assert.deepEqual(
      tensorBoardRuns(withEvents()).map((r) => r.dir),
      ['synthetic', 'cached', 'cold-rank0', 'cold-rank1', 'cached-cpus=2', 'split'],
    );
  });

  for (const [name, path] of [
    ['quick', QUICK],
    ['pooled', POOLED],
  ] as const) {
    test(`event files an independent reader checks (${name})`, async (t) => {
      if (!existsSync(PYTHON)) return t.skip(`needs ${PYTHON} to read the event files back`);
      const dir = tempDir();
      try {
        const out = join(dir, 'tb');
        const written = writeExport(readProfile(path), 'tensorboard', out, false);
        assert.equal(written.files.length, readdirSync(out).length);
        const result = await execa(PYTHON, [READER, path, out], { reject: false, all: true });
        assert.equal(result.exitCode, 0, result.all);
        const checked = JSON.parse(result.stdout) as { runs: number; scalars: number };
        assert.equal(checked.runs, 4);
        assert.ok(checked.scalars > 3 * 90, `checked ${checked.scalars} scalars`);
        // The reader fails on a flipped bit.
        const file = written.files[2];
        const bytes = readFileSync(file);
        bytes[bytes.length - 9] ^= 1;
        writeFileSync(file, bytes);
        const broken = await execa(PYTHON, [READER, path, out], { reject: false, all: true });
        assert.equal(broken.exitCode, 1);
        assert.match(broken.all, /CRC/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});

describe('python ds_analyzer.load', () => {
  test('the same rows as the CSV, from the JSON', async (t) => {
    if (!existsSync(PYTHON)) return t.skip(`needs ${PYTHON}`);
    const dir = tempDir();
    try {
      for (const profile of [withEvents(), readProfile(POOLED)]) {
        const path = join(dir, 'profile.json');
        writeFileSync(path, JSON.stringify(profile));
        const code = `import json, sys; sys.path.insert(0, ${JSON.stringify(PACKAGE_DIR)}); import ds_analyzer; print(json.dumps(ds_analyzer.load(sys.argv[1]).iteration_rows()))`;
        const result = await execa(PYTHON, ['-c', code, path], {
          reject: false,
          all: true,
          env: { PYTHONDONTWRITEBYTECODE: '1' },
        });
        assert.equal(result.exitCode, 0, result.all);
        assert.deepEqual(JSON.parse(result.stdout), JSON.parse(JSON.stringify(iterationRows(profile))));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a DataFrame equal to pandas.read_csv of the CSV', async (t) => {
    if (!existsSync(PYTHON)) return t.skip(`needs ${PYTHON}`);
    if ((await execa(PYTHON, ['-c', 'import pandas'], { reject: false })).exitCode !== 0) {
      return t.skip('needs pandas (Debian: apt-get install python3-pandas)');
    }
    const dir = tempDir();
    try {
      const path = join(dir, 'profile.json');
      const profile = withEvents();
      writeFileSync(path, JSON.stringify(profile));
      writeFileSync(join(dir, 'profile.csv'), iterationsCsv(iterationRows(profile)));
      const code = [
        'import sys; import pandas as pd',
        `sys.path.insert(0, ${JSON.stringify(PACKAGE_DIR)}); import ds_analyzer`,
        'read = pd.read_csv(sys.argv[2]); loaded = ds_analyzer.load(sys.argv[1]).iterations',
        // pandas' default float parser can be a few ulps off (float_precision='round_trip' is exact); an all-zero float
        // column reads back as int64.
        'pd.testing.assert_frame_equal(read, loaded, check_dtype=False, rtol=1e-12)',
        "pd.testing.assert_frame_equal(pd.read_csv(sys.argv[2], float_precision='round_trip'), loaded, check_dtype=False, check_exact=True)",
        "print(len(read), read['epoch'].dtype, read['warmup'].dtype, read['variant'].isna().sum())",
      ].join('\n');
      const result = await execa(PYTHON, ['-c', code, path, join(dir, 'profile.csv')], {
        reject: false,
        all: true,
        env: { PYTHONDONTWRITEBYTECODE: '1' },
      });
      assert.equal(result.exitCode, 0, result.all);
      assert.equal(result.stdout.trim(), `${iterationRows(profile).length} float64 bool 0`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('export command', () => {
  test('writes beside the profile, then refuses to overwrite without --force', async () => {
    const dir = tempDir();
    try {
      writeFileSync(join(dir, 'train.json'), readFileSync(QUICK));
      const { run } = await import('../../src/cli/main.js');
      const quick = readProfile(QUICK);
      const iterations = Object.values(quick.modes).reduce((sum, m) => sum + m.ranks[0].iterations.length, 0);
      const runs = tensorBoardRuns(quick);
      const what = {
        csv: `${iterations} iterations`,
        // An iteration, its wait and its step; a process's name and order, a thread's (one rank a mode).
        'chrome-trace': `${3 * iterations + 3 * 4} trace events`,
        tensorboard: `${runs.reduce((sum, r) => sum + r.scalars.length, 0)} scalars in 4 runs`,
      };
      for (const [format, out] of [
        ['csv', 'train.csv'],
        ['chrome-trace', 'train.trace.json'],
        ['tensorboard', 'train-tensorboard'],
      ] as const) {
        const io = fakeIo(dir);
        assert.equal(await run(['export', 'train.json', '--format', format], io), 0, io.err);
        assert.equal(io.out, `export: ${out} (${format}: ${what[format]})\n`);
        assert.equal(defaultExportPath(join(dir, 'train.json'), format), join(dir, out));
        await expectOneLineError(dir, ['export', 'train.json', '--format', format], 2, /exists: pass --force/);
        assert.equal(await run(['export', 'train.json', '--format', format, '--force'], fakeIo(dir)), 0);
      }
      assert.equal(readFileSync(join(dir, 'train.csv'), 'utf8'), iterationsCsv(iterationRows(readProfile(QUICK))));
      assert.equal(await run(['export', 'train.json', '--format', 'csv', '--out', 'sub/x.csv'], fakeIo(dir)), 0);
      assert.ok(existsSync(join(dir, 'sub', 'x.csv')));
      await expectOneLineError(
        dir,
        ['export', 'train.json', '--format', 'parquet'],
        3,
        /--format parquet .*csv, chrome-trace, tensorboard/,
      );
      await expectOneLineError(dir, ['export', 'missing.json', '--format', 'csv'], 4, /does not exist/);
      await expectOneLineError(dir, ['export', 'train.json', '--format', 'csv', '--out', 'sub'], 2, /is a folder/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
