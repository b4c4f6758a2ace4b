// The cold mode's meter for remote data when the job reaches its origin directly: the counters its own
// processes' HTTP clients write (python/ds_analyzer/_http.py: one net-PID.jsonl per process, cumulative
// lines), read every quarter second and placed at the run's resource samples. No proxy carries the bytes,
// so the meter costs the job microseconds per request and nothing per byte (bench/client-meter.bench.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { NetworkUse, ResourceSample } from '../../schema/profile.js';
import { mean } from '../../analysis/stats.js';
import { nearestRank } from '../../quantile.js';
import { counterAt } from '../window-rates.js';
import type { CounterReading, FetchMeter, FetchReadings } from './data-source.js';

const READ_EVERY_MS = 250;

const MESSAGES = {
  windowSource: "body bytes the job's HTTP clients took from the origin, counted in its processes (sampled)",
  wholeRunSource: "body bytes the job's HTTP clients took from the origin over the whole run, counted in its processes",
} as const;

/** One line of a process's counters: cumulative totals, and the timings taken since its previous line. */
const CounterLine = z.object({
  pid: z.number().int(),
  t: z.number(),
  requests: z.number().int().nonnegative(),
  bytes: z.number().nonnegative(),
  busyMs: z.number().nonnegative(),
  maxInFlight: z.number().int().nonnegative(),
  firstMs: z.number().nullable(),
  lastEndMs: z.number().nullable(),
  statuses: z.record(z.string(), z.number().int().nonnegative()),
  failures: z.number().int().nonnegative(),
  firstByteMs: z.array(z.number().nonnegative()),
  requestMs: z.array(z.number().nonnegative()),
});
type CounterLine = z.infer<typeof CounterLine>;

/** Every process's lines in `dir`, in order; a line cut short by a write in progress is left for the next read. */
export function readClientCounters(dir: string): CounterLine[][] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => /^net-\d+\.jsonl$/.test(name));
  } catch {
    return [];
  }
  return names.map((name) => {
    let text: string;
    try {
      text = readFileSync(join(dir, name), 'utf8');
    } catch {
      return [];
    }
    const lines: CounterLine[] = [];
    // Whole lines only: the text after the last newline may be a line still being written.
    for (const line of text.split('\n').slice(0, -1)) {
      const parsed = CounterLine.safeParse(parseJson(line));
      if (parsed.success) lines.push(parsed.data);
    }
    return lines;
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** The bytes all processes had taken by their latest lines. */
function totalBytes(processes: readonly CounterLine[][]): number {
  return processes.reduce((sum, lines) => sum + (lines.at(-1)?.bytes ?? 0), 0);
}

/** The environment a job needs for its clients to count: the folder, and the origins whose requests count. */
export function clientMeterEnv(dir: string, origins: readonly string[]): Record<string, string> {
  return { DSA_NET_DIR: dir, DSA_NET_ORIGINS: origins.join(',') };
}

/** Starts metering one run whose job writes its counters into `dir` (made by the job's hook). */
export function startClientMeter(dir: string, origins: readonly string[]): FetchMeter {
  const startedAt = Date.now();
  const readings: CounterReading[] = [{ t: startedAt, bytes: 0 }];
  const read = () => readings.push({ t: Date.now(), bytes: totalBytes(readClientCounters(dir)) });
  const timer = setInterval(read, READ_EVERY_MS);
  timer.unref();
  return {
    jobEnv: clientMeterEnv(dir, origins),
    attach() {
      // The job's processes count for themselves: nothing to attach to.
    },
    finish(resources: readonly ResourceSample[]): FetchReadings {
      clearInterval(timer);
      const processes = readClientCounters(dir);
      readings.push({ t: Date.now(), bytes: totalBytes(processes) });
      const series = resources.length > 0 ? resources.map((s) => ({ t: s.t, bytes: counterAt(readings, s.t, (r) => r.bytes) ?? 0 })) : readings;
      return {
        series,
        seriesSource: MESSAGES.windowSource,
        wholeRunBytes: totalBytes(processes),
        wholeRunSource: MESSAGES.wholeRunSource,
        otherReads: () => null,
        ownCounter: true,
        network: clientNetworkUse(processes, (Date.now() - startedAt) / 1000),
      };
    },
  };
}

/**
 * The most requests that could have been in flight at once: each process's most, summed over the processes
 * that were fetching at the same time (loader workers of one epoch, not the workers of every epoch).
 */
function mostAtOnce(last: readonly CounterLine[]): number {
  const spans = last.filter((l) => l.firstMs !== null).map((l) => ({ from: l.firstMs!, to: Math.max(l.firstMs!, l.lastEndMs ?? l.t), most: l.maxInFlight }));
  let most = 0;
  for (const span of spans) {
    const overlapping = spans.filter((other) => other.from <= span.from && other.to >= span.from);
    most = Math.max(most, overlapping.reduce((sum, other) => sum + other.most, 0));
  }
  return most;
}

/** What one run fetched, from its processes' counters: totals from their last lines, timings from all. */
export function clientNetworkUse(processes: readonly CounterLine[][], sec: number): NetworkUse {
  const last = processes.map((lines) => lines.at(-1)).filter((line): line is CounterLine => line !== undefined);
  const statuses: Record<string, number> = {};
  for (const line of last) for (const [status, count] of Object.entries(line.statuses)) statuses[status] = (statuses[status] ?? 0) + count;
  const firstBytes = processes.flatMap((lines) => lines.flatMap((l) => l.firstByteMs)).sort((a, b) => a - b);
  const requestTimes = processes.flatMap((lines) => lines.flatMap((l) => l.requestMs)).sort((a, b) => a - b);
  const quantiles = (sorted: number[]) => ({ p50: nearestRank(sorted, 0.5), p95: nearestRank(sorted, 0.95), p99: nearestRank(sorted, 0.99), n: sorted.length });
  const failures = last.reduce((sum, l) => sum + l.failures, 0);
  return {
    requests: last.reduce((sum, l) => sum + l.requests, 0),
    tunnels: 0,
    originBytes: totalBytes(processes),
    cacheBytes: 0,
    cacheHits: 0,
    otherBytes: 0,
    statuses,
    failures,
    lastFailure: failures > 0 ? 'a request to the origin failed in the job (counted in its HTTP client)' : null,
    firstByteMs: firstBytes.length > 0 ? quantiles(firstBytes) : null,
    requestMs: requestTimes.length > 0 ? { mean: mean(requestTimes), ...quantiles(requestTimes) } : null,
    // The time requests were open, summed over processes, per second of the run: the mean in flight.
    meanInFlight: sec > 0 ? last.reduce((sum, l) => sum + l.busyMs, 0) / 1000 / sec : 0,
    maxInFlight: mostAtOnce(last),
    capBytesPerSec: null,
    meter: 'client',
  };
}
