import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventsReader, processNode } from '../../src/profile/events-reader.js';
import { CpuLedger } from '../../src/system/kernel/cpu-ledger.js';

const start = JSON.stringify({ v: 1, type: 'start', t: 1, pid: 7, mode: 'cold', workers: 2 });
const iter = (i: number) => JSON.stringify({ v: 1, type: 'iter', t: 10 + i, i, waitMs: 1, computeMs: 2, samples: 4 });

test('reads appended events incrementally and waits for a line to be complete', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dsa-events-'));
  const file = join(dir, 'events-0-7.jsonl');
  const reader = new EventsReader(dir);
  writeFileSync(file, `${start}\n${iter(0)}\n${iter(1).slice(0, 20)}`);
  let [events] = reader.poll();
  assert.equal(events.start?.pid, 7);
  assert.equal(events.iterations.length, 1);
  appendFileSync(file, `${iter(1).slice(20)}\n`);
  [events] = reader.poll();
  assert.equal(events.iterations.length, 2);
  assert.equal(events.badLines, 0);
});

test('a poll with nothing new reads nothing, and each poll is charged to the ledger as events', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dsa-events-'));
  const file = join(dir, 'events-0-7.jsonl');
  let cpu = 0;
  const ledger = new CpuLedger(() => (cpu += 0.0001));
  const reader = new EventsReader(dir, { ledger });
  writeFileSync(file, `${start}\n${iter(0)}\n`);
  assert.equal(reader.poll()[0].iterations.length, 1);
  assert.equal(reader.poll()[0].iterations.length, 1, 'nothing appended: nothing new');
  appendFileSync(file, `${iter(1)}\n`);
  const [events] = reader.finish();
  assert.equal(events.iterations.length, 2);
  assert.equal(events.lines, 3, 'no line read twice');
  assert.equal(ledger.reading().events.calls, 3, 'two polls and the one finish() makes');
  assert.equal(ledger.reading().sampler.calls, 0);
});

test('bad lines are counted, never fatal, and the rest is kept', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dsa-events-'));
  writeFileSync(
    join(dir, 'events-0-1.jsonl'),
    `${start}\nnot json\n{"v":2,"type":"iter"}\n${iter(0)}\n{"v":1,"type":"iter","t":1,"i":1,"waitMs":-5,"computeMs":1,"samples":1}\n`,
  );
  const [events] = new EventsReader(dir).finish();
  assert.equal(events.badLines, 3);
  assert.equal(events.firstBadLine, 'not json');
  assert.equal(events.iterations.length, 1);
});

test('finish() takes a last line without newline; files of several processes stay apart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dsa-events-'));
  writeFileSync(join(dir, 'events-0-1.jsonl'), `${start}\n${iter(0)}`);
  writeFileSync(join(dir, 'events-1-2.jsonl'), `${iter(0)}\n${iter(1)}\n`);
  writeFileSync(join(dir, 'notes.txt'), 'ignored');
  const all = new EventsReader(dir).finish();
  assert.deepEqual(
    all.map((e) => e.iterations.length),
    [1, 2],
  );
});

test("a process's node is the one its start event names; a job that named none ran on the CLI's machine, node 0", () => {
  const dir = mkdtempSync(join(tmpdir(), 'dsa-events-'));
  const named = JSON.stringify({
    v: 1,
    type: 'start',
    t: 1,
    rank: 3,
    pid: 8,
    mode: 'cold',
    hostname: 'gpu-b',
    nodeRank: 1,
  });
  writeFileSync(join(dir, 'events-0-7.jsonl'), `${start}\n${iter(0)}\n`);
  writeFileSync(join(dir, 'events-3-8.jsonl'), `${named}\n`);
  writeFileSync(join(dir, 'events-4-9.jsonl'), `${iter(0)}\n`);
  const [old, own, noStart] = new EventsReader(dir).finish();
  assert.deepEqual(processNode(old, 'here'), { hostname: 'here', nodeRank: 0 });
  assert.deepEqual(processNode(own, 'here'), { hostname: 'gpu-b', nodeRank: 1 });
  assert.deepEqual(processNode(noStart, 'here'), { hostname: 'here', nodeRank: 0 });
});
