/**
 * The launch's watchdog (profile/hang-watch.ts) over polls of made-up events
 * and resource samples: the silence is timed from the poll where the
 * iteration count last grew, on the profiler's clock, and a job busy on its
 * CPU meanwhile is not hung.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ProcessEvents } from '../../src/profile/events-reader.js';
import { HangWatch } from '../../src/profile/hang-watch.js';
import type { ResourceSample } from '../../src/schema/profile.js';

const T0 = 1_700_000_000_000;

/** One process that reported `count` iterations of 100 ms, stamped with a clock far from the profiler's. */
function events(count: number): ProcessEvents[] {
  const iterations = Array.from({ length: count }, (_, i) => ({ i, t: 5, waitMs: 25, computeMs: 75, samples: 1 }));
  return [{ iterations } as unknown as ProcessEvents];
}

const sample = (t: number, jobCpuSec: number) => ({ t, jobCpuSec }) as ResourceSample;

test('the watchdog times the silence from the poll where iterations last grew, on its own clock', () => {
  const watch = new HangWatch(60);
  assert.equal(watch.check(events(0), null, T0), null, 'no iteration yet: the first-iteration timeout judges');
  assert.equal(watch.check(events(50), sample(T0 + 1000, 10), T0 + 1000), null);
  assert.equal(watch.check(events(100), sample(T0 + 5000, 12), T0 + 5000), null);
  // Their event times (t = 5 ms after the epoch) do not matter: 59 s of silence is under the minute.
  assert.equal(watch.check(events(100), sample(T0 + 64_000, 12.1), T0 + 64_000), null);
  const hung = watch.check(events(100), sample(T0 + 66_000, 12.2), T0 + 66_000);
  assert.match(hung?.text ?? '', /^no iteration for 61 s, 610x the median 0\.1 s/);
  assert.equal(hung?.lastAt, T0 + 5000);
});

test('a job busy on its CPU without iterations (a validation pass) is not hung; with no samples the silence decides', () => {
  const busy = new HangWatch(60);
  busy.check(events(100), sample(T0, 10), T0);
  assert.equal(busy.check(events(100), sample(T0 + 90_000, 10 + 45), T0 + 90_000), null, 'half a CPU for 90 s');
  const unsampled = new HangWatch(60);
  unsampled.check(events(100), null, T0);
  assert.ok(unsampled.check(events(100), null, T0 + 90_000));
});
