/**
 * The stall decisions (analysis/stalls.ts) on synthetic meter series, client
 * failure counts and iteration times: a frozen endpoint, a crawling link, a
 * long step, a start-up, failed requests, a hung job.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  blockStall,
  fetchStall,
  hangOf,
  timeoutStall,
  type Arrival,
  type MeterReading,
  type StallBlock,
  type WatchedIteration,
} from '../../src/analysis/stalls.js';

const T0 = 1_700_000_000_000;

/** Readings every 250 ms from 0 to `untilSec`, the bytes from `bytesAt(sec)`. */
function meter(untilSec: number, bytesAt: (sec: number) => number, extra?: (sec: number) => Partial<MeterReading>) {
  const readings: MeterReading[] = [];
  for (let ms = 0; ms <= untilSec * 1000; ms += 250)
    readings.push({ t: T0 + ms, bytes: bytesAt(ms / 1000), ...extra?.(ms / 1000) });
  return readings;
}

/** A batch every `everyMs` from `fromSec` to `toSec`, each having waited `waitMs`. */
function batches(fromSec: number, toSec: number, everyMs: number, waitMs: number): Arrival[] {
  const out: Arrival[] = [];
  for (let ms = fromSec * 1000; ms <= toSec * 1000; ms += everyMs) out.push({ t: T0 + ms, waitMs });
  return out;
}

const cold = (endSec: number, endedByTimeout: boolean): StallBlock => ({
  mode: 'cold',
  startedAt: T0,
  endedAt: T0 + endSec * 1000,
  endedByTimeout,
  fetchesFrom: 'network',
});

test('an endpoint frozen 12 s into the cold block: a stall from then on, named with its time', () => {
  // Bytes flow until 12 s, then none; the loader's prefetched batches last another second; --timeout ends it at 60 s.
  const readings = meter(60, (s) => Math.min(s, 12) * 1e6);
  const arrivals = batches(1, 13, 100, 20);
  const stall = fetchStall(readings, arrivals, cold(60, true));
  assert.ok(stall, 'the frozen meter is a stall');
  assert.equal(stall.cause, 'no-bytes');
  assert.ok(Math.abs(stall.atSec - 13) < 0.5, `${stall.atSec}`);
  assert.match(stall.text, /^the endpoint sent nothing from 13 s into the cold block, for 47 s until the block ended/);
});

test('an endpoint that froze for 20 s and came back: the batch after it waited through it', () => {
  const readings = meter(60, (s) => (s < 12 ? s : s < 32 ? 12 : s - 20) * 1e6);
  const arrivals = [...batches(1, 12, 100, 20), { t: T0 + 32_500, waitMs: 20_300 }, ...batches(33, 59, 100, 20)];
  const stall = fetchStall(readings, arrivals, cold(60, false));
  assert.equal(stall?.cause, 'no-bytes');
  assert.ok(stall && Math.abs(stall.silentSec! - 20) < 0.5, JSON.stringify(stall));
});

test('a healthy cold block, a crawling link, a long step and a slow start-up are no fetch stall', () => {
  assert.equal(
    fetchStall(
      meter(60, (s) => s * 1e6),
      batches(1, 60, 100, 20),
      cold(60, false),
    ),
    null,
    'healthy',
  );
  // 400 kbit/s: bytes still come every reading, each batch waits 20 s; the timeout's rule covers its few iterations.
  assert.equal(
    fetchStall(
      meter(120, (s) => s * 5e4),
      batches(20, 120, 20_000, 19_900),
      cold(120, true),
    ),
    null,
  );
  // A 30 s step with the loader's prefetch full: nothing fetched, the batch after it hardly waited.
  assert.equal(
    fetchStall(
      meter(120, () => 5e6),
      batches(0, 120, 30_000, 2),
      cold(120, false),
    ),
    null,
    'long step',
  );
  // 12 s of imports and model load, then the first batch asked for and waited 6 s.
  const startup = meter(30, (s) => (s < 12 ? 0 : (s - 12) * 1e6));
  assert.equal(
    fetchStall(startup, [{ t: T0 + 13_000, waitMs: 6_000 }, ...batches(13.1, 30, 100, 20)], cold(30, false)),
    null,
  );
});

test('a frozen meter outside the cold mode is not a fetch stall: the cached and synthetic modes fetch nothing', () => {
  const block = { ...cold(60, true), mode: 'cached' as const };
  assert.equal(
    fetchStall(
      meter(60, () => 0),
      batches(1, 13, 100, 20),
      block,
    ),
    null,
  );
});

test("failed requests counted in the job's clients: a stall from the first failure, when 1% or more failed", () => {
  const failing = meter(
    60,
    (s) => s * 1e6,
    (s) => ({ requests: Math.floor(s * 5), failures: s >= 20 ? Math.min(5, Math.floor(s - 19)) : 0 }),
  );
  const stall = fetchStall(failing, batches(1, 60, 100, 20), cold(60, false));
  assert.equal(stall?.cause, 'request-errors');
  assert.ok(stall && Math.abs(stall.atSec - 20) < 0.5, JSON.stringify(stall));
  assert.match(stall!.text, /5 of 300 failed/);
  // One failure in a thousand requests (a retried 503) is not a stall; none is none.
  const rare = meter(
    60,
    (s) => s * 1e6,
    (s) => ({ requests: Math.floor(s * 20), failures: s >= 30 ? 1 : 0 }),
  );
  assert.equal(fetchStall(rare, batches(1, 60, 100, 20), cold(60, false)), null);
  const none = meter(
    60,
    (s) => s * 1e6,
    (s) => ({ requests: Math.floor(s * 10), failures: 0 }),
  );
  assert.equal(fetchStall(none, batches(1, 60, 100, 20), cold(60, false)), null);
  // Failures before the block (an earlier block of the launch) are not its own.
  const earlier = meter(
    60,
    (s) => s * 1e6,
    (s) => ({ requests: Math.floor(s * 10), failures: s >= 5 ? 5 : 0 }),
  );
  assert.equal(fetchStall(earlier, batches(1, 60, 100, 20), { ...cold(60, false), startedAt: T0 + 10_000 }), null);
  // A job its failures ended: the meter's reading just after the block's end holds them, and counts.
  const lateRead = meter(
    60,
    (s) => s * 1e6,
    (s) => ({ requests: Math.floor(s * 10), failures: s >= 30 ? 16 : 0 }),
  );
  const endedAt = T0 + 29_500;
  const late = fetchStall(lateRead, batches(1, 29, 100, 20), { ...cold(60, false), endedAt });
  assert.equal(late?.cause, 'request-errors', 'a reading 0.5 s after the end counts');
  const muchLater = fetchStall(lateRead, batches(1, 20, 100, 20), { ...cold(60, false), endedAt: T0 + 20_000 });
  assert.equal(muchLater, null, 'a reading 10 s after the end is another time');
});

test('a block --timeout ended with fewer iterations than it needs stalled; one that measured enough did not', () => {
  const block = { mode: 'cold' as const, endedByTimeout: true, wallSec: 900 };
  const stall = timeoutStall(block, 12, 50, 900);
  assert.equal(stall?.cause, 'timeout');
  assert.match(
    stall!.text,
    /the cold block reached --timeout \(900 s\) with 12 measured iterations, fewer than the 50/,
  );
  assert.equal(timeoutStall(block, 60, 50, 900), null);
  assert.equal(timeoutStall({ ...block, endedByTimeout: false }, 12, 50, 900), null);
});

/** `count` iterations of `iterMs` each (a quarter of it waiting). */
function steady(count: number, iterMs: number): WatchedIteration[] {
  return Array.from({ length: count }, () => ({ waitMs: iterMs / 4, computeMs: iterMs * 0.75 }));
}

test('the watchdog: no iteration for 30x the median and at least the minimum is a hang, said with both figures', () => {
  const fast = steady(100, 100); // median 0.1 s, the last seen at T0 + 10 s
  const last = T0 + 10_000;
  assert.equal(hangOf(fast, last, last + 59_000), null, 'under the minute');
  const hung = hangOf(fast, last, last + 61_000);
  assert.ok(hung);
  assert.match(hung.text, /^no iteration for 61 s, 610x the median 0\.1 s: the job looks hung$/);
  const slow = steady(20, 2400); // median 2.4 s: 30x is 72 s
  assert.equal(hangOf(slow, T0, T0 + 70_000), null, 'a minute, but under 30x its median');
  assert.match(hangOf(slow, T0, T0 + 74_000)!.text, /^no iteration for 74 s, 31x the median 2\.4 s/);
  // The minimum is a setting (--hang-timeout); no iteration yet is the first-iteration timeout's to judge.
  assert.ok(hangOf(steady(50, 10), T0, T0 + 1_500, 1));
  assert.equal(hangOf([], T0, T0 + 1e9), null);
  // Busy without iterations (a validation pass, a save): half a CPU meanwhile is no hang; a deadlock idles.
  assert.equal(hangOf(fast, last, last + 61_000, 60, 0.5), null);
  assert.ok(hangOf(fast, last, last + 61_000, 60, 0.02));
});

test('a block stall names the fetch cause where the watchdog also fired, the hang alone otherwise', () => {
  const hang = hangOf(steady(100, 100), T0 + 10_000, T0 + 80_000)!;
  const fetch = fetchStall(
    meter(80, (s) => Math.min(s, 10) * 1e6),
    batches(1, 10, 100, 20),
    cold(80, true),
  );
  const both = blockStall('cold', T0, { hang, fetch, timeout: null });
  assert.equal(both?.cause, 'no-bytes');
  assert.match(
    both!.text,
    /the endpoint sent nothing from 10 s into the cold block.*; the block was ended: no iteration/,
  );
  const alone = blockStall('cached', T0, { hang, fetch: null, timeout: null });
  assert.equal(alone?.cause, 'hung');
  assert.match(
    alone!.text,
    /no iteration for 70 s from 10 s into the cached block, 700x the median 0\.1 s: the job looks hung/,
  );
  assert.equal(blockStall('cold', T0, { hang: null, fetch: null, timeout: null }), null);
});
