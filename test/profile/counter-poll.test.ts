/** The readings a polled counter gives the profile: placed at the run's samples, and its last ones kept. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CounterPoll } from '../../src/profile/data-sources/counter-poll.js';
import type { ResourceSample } from '../../src/schema/profile.js';

test("requests that failed after the sampler's last sample (the job's last moments) stay in the series", () => {
  const poll = new CounterPoll(() => {}, 60_000);
  poll.stop();
  const t0 = poll.readings[0].t;
  poll.readings.push({ t: t0 + 100, bytes: 10, requests: 4, failures: 0 });
  poll.readings.push({ t: t0 + 900, bytes: 12, requests: 6, failures: 2 });
  const samples = [{ t: t0 }, { t: t0 + 500 }] as ResourceSample[];
  const series = poll.seriesAt(samples);
  assert.deepEqual(
    series.map((r) => [r.t - t0, r.failures]),
    [
      [0, undefined],
      [500, 0],
      [900, 2],
    ],
  );
  assert.equal(series[1].bytes, 10 + ((12 - 10) * 400) / 800, 'bytes between readings are interpolated');
});
