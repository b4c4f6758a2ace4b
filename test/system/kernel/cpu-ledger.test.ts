import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  CpuLedger,
  LEDGER_COMPONENTS,
  emptyReading,
  processCpuClock,
  readingDifference,
  threadCpuClock,
  totalCpuSec,
} from '../../../src/system/kernel/cpu-ledger.js';

/** A clock the test moves by hand. */
function fakeClock(): { clock: () => number; advance: (sec: number) => void } {
  let now = 0;
  return { clock: () => now, advance: (sec) => void (now += sec) };
}

/**
 * Busy work until `clock` has moved `ms` (not wall time, which would stretch on a busy machine), or 2 s of wall time
 * have gone (a clock that does not move ends it there). By the thread's own clock: the process's also counts its other
 * threads, which in a test process shared with other files (scripts/test-plan.ts) may be busy too: spun by it, 30 ms
 * of the process once held 9.6 ms of this thread.
 */
function spin(ms: number, clock: () => number): void {
  const until = clock() + ms / 1000;
  const wallUntil = performance.now() + 2000;
  while (clock() < until && performance.now() < wallUntil);
}

test('a charge adds the CPU of its work to its component only, and counts the call', () => {
  const { clock, advance } = fakeClock();
  const ledger = new CpuLedger(clock);
  assert.equal(
    ledger.charge('sampler', () => (advance(0.002), 'value')),
    'value',
  );
  ledger.charge('sampler', () => advance(0.001));
  ledger.charge('events', () => advance(0.0005));
  const reading = ledger.reading();
  assert.deepEqual(reading.sampler, { cpuSec: 0.003, calls: 2 });
  assert.deepEqual(reading.events, { cpuSec: 0.0005, calls: 1 });
  for (const component of ['keeper', 'meter', 'warming', 'eviction'] as const)
    assert.deepEqual(reading[component], { cpuSec: 0, calls: 0 });
  assert.equal(totalCpuSec(reading), 0.0035);
});

test('work that throws is charged all the same, and the error passes through', () => {
  const { clock, advance } = fakeClock();
  const ledger = new CpuLedger(clock);
  assert.throws(
    () =>
      ledger.charge('keeper', () => {
        advance(0.01);
        throw new Error('EBADF');
      }),
    /EBADF/,
  );
  assert.deepEqual(ledger.reading().keeper, { cpuSec: 0.01, calls: 1 });
});

test('a span charges the slices between start and stop, once; add takes what a component timed itself', () => {
  const { clock, advance } = fakeClock();
  const ledger = new CpuLedger(clock);
  const warming = ledger.account('warming');
  assert.equal(ledger.account('warming'), warming, 'one account per component');
  let stop = warming.start();
  advance(0.004);
  stop();
  advance(1); // another component's turn of the loop: not warming's
  stop();
  stop = warming.start();
  advance(0.001);
  stop();
  ledger.account('keeper').add(0.25, 40);
  ledger.account('keeper').add(-1);
  const reading = ledger.reading();
  assert.equal(reading.warming.calls, 2);
  assert.ok(Math.abs(reading.warming.cpuSec - 0.005) < 1e-12);
  assert.deepEqual(reading.keeper, { cpuSec: 0.25, calls: 41 });
});

test('since: what each component was charged after an earlier reading; readings are copies', () => {
  const { clock, advance } = fakeClock();
  const ledger = new CpuLedger(clock);
  const tick = ledger.wrap('meter', (n: number) => (advance(0.001 * n), n));
  tick(1);
  const before = ledger.reading();
  assert.equal(tick(2), 2);
  tick(3);
  const during = ledger.since(before);
  assert.equal(during.meter.calls, 2);
  assert.ok(Math.abs(during.meter.cpuSec - 0.005) < 1e-12);
  assert.deepEqual(before.meter, { cpuSec: 0.001, calls: 1 }, 'a reading does not move afterwards');
  assert.deepEqual(Object.keys(emptyReading()), [...LEDGER_COMPONENTS]);
  const between = readingDifference(ledger.reading(), before);
  assert.deepEqual(between.meter.calls, 2, 'the difference of two readings is what since() answers');
});

test('the real clocks: the thread clock moves with busy work and not with sleep, and a reading costs microseconds', async () => {
  const clock = threadCpuClock();
  const ledger = new CpuLedger(clock);
  const processBefore = processCpuClock();
  ledger.charge('sampler', () => spin(30, clock));
  const processUsed = processCpuClock() - processBefore;
  const busy = ledger.reading().sampler.cpuSec;
  // The process's clock counts Node's other threads too (GC helpers): the thread's share of it is most, never more.
  assert.ok(
    busy >= 0.01 && busy <= processUsed + 0.002,
    `30 ms of busy work (the process used ${processUsed} s) charged ${busy} s`,
  );
  // Node's own work (a collection, the runner's report) can fall in one sleep on a loaded runner: the least of three
  // sleeps is still far under their 50 ms, where a wall clock would count all of it.
  const sleptCpu: number[] = [];
  for (let attempt = 0; attempt < 3; attempt++) {
    const before = clock();
    await new Promise((resolve) => setTimeout(resolve, 50));
    sleptCpu.push(clock() - before);
  }
  assert.ok(Math.min(...sleptCpu) < 0.02, `sleeping is not CPU (50 ms sleeps charged ${sleptCpu.join(', ')} s)`);
  const cost = ledger.clockCostSec();
  assert.ok(cost > 0 && cost < 0.0005, `one reading costs ${cost} s`);
  assert.ok(processCpuClock() > 0);
});
