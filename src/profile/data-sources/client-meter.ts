// The cold mode's meter for remote data when the job reaches its origin directly: the counters its own processes' HTTP
// clients write (python/ds_analyzer/_http.py: one net-PID.jsonl per process, cumulative lines), read every quarter
// second and placed at the run's resource samples. In one launch each line carries the block it was counted in, so a
// block's counts are its lines' rise, however late the CLI read them. No proxy carries the bytes, so the meter costs
// the job microseconds per request and nothing per byte (bench/client-meter.bench.ts).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { NetworkUse } from '../../schema/profile.js';
import { mean } from '../../analysis/stats.js';
import { tailQuantiles } from '../../quantile.js';
import { counterMeter, statusRise, type CounterPoll } from './counter-poll.js';
import type { FetchMeter } from './fetch-meter.js';
import type { CpuLedger } from '../../system/kernel/cpu-ledger.js';
import { AppendedLines } from '../events-reader.js';

const READ_EVERY_MS = 250;

const MESSAGES = {
  unseen:
    "the job's HTTP clients counted no request to the origin and answered none from the copy: its client is " +
    "neither Python's http.client nor aiohttp (boto3, requests, urllib3, urllib, fsspec's HTTP, s3fs and gcsfs are; " +
    'the AWS CRT, curl and native readers are not), ' +
    'or it reaches the data through another proxy, so the hook can neither count nor answer it; profile with ' +
    '--net-meter proxy (the proxy counts and answers any client that honours HTTP_PROXY, a launch a mode)',
  windowSource: "body bytes the job's HTTP clients took from the origin, counted in its processes (sampled)",
  wholeRunSource: "body bytes the job's HTTP clients took from the origin over the whole run, counted in its processes",
  blockSource: "body bytes the job's HTTP clients took from the origin, counted in its processes under the block",
} as const;

/** One line of a process's counters: cumulative totals, and the timings taken since its previous line. */
const CounterLine = z.object({
  pid: z.number().int(),
  /** The block of one launch the counts since the process's previous line were made in (0: the first). */
  block: z.number().int().nonnegative().default(0),
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
  /** Requests and body bytes the hook answered from the local copy (cached mode); absent from an older hook. */
  localRequests: z.number().int().nonnegative().optional(),
  localBytes: z.number().nonnegative().optional(),
});
type CounterLine = z.infer<typeof CounterLine>;

/** One process's counters: its latest line's totals, and every timing its lines carried. */
export interface ProcessCounters {
  last: CounterLine;
  firstByteMs: number[];
  requestMs: number[];
  /** Every line it wrote, in order (a block of one launch takes those tagged with it: networkOfBlock); absent: none kept. */
  lines?: CounterLine[];
}

/** The processes' counter files in a folder, read incrementally: reading them whole every poll grows with the run. */
export class ClientCounters {
  private readonly appended = new AppendedLines();
  private readonly byFile = new Map<string, ProcessCounters>();

  constructor(private readonly dir: string) {}

  /** Reads what the processes appended since the last poll; returns every process that wrote a whole line. */
  poll(): ProcessCounters[] {
    let names: string[] = [];
    try {
      names = readdirSync(this.dir).filter((name) => /^net-\d+\.jsonl$/.test(name));
    } catch {
      // No folder yet: no process has counted a request.
    }
    for (const name of names) {
      this.appended.read(join(this.dir, name), (line) => {
        const parsed = CounterLine.safeParse(parseJson(line));
        if (!parsed.success) return;
        const counters = this.byFile.get(name) ?? { last: parsed.data, firstByteMs: [], requestMs: [], lines: [] };
        this.byFile.set(name, counters);
        counters.last = parsed.data;
        counters.lines?.push(parsed.data);
        counters.firstByteMs.push(...parsed.data.firstByteMs);
        counters.requestMs.push(...parsed.data.requestMs);
      });
    }
    return [...this.byFile.values()];
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

type Count = 'bytes' | 'requests' | 'failures' | 'busyMs' | 'localRequests' | 'localBytes';

/** One count summed over all processes' latest lines (a count an older hook does not write: 0). */
function total(processes: readonly ProcessCounters[], count: Count): number {
  return processes.reduce((sum, p) => sum + (p.last[count] ?? 0), 0);
}

/**
 * Starts metering one run whose job writes its counters into `dir` (made by the job's hook; DSA_NET_COPY names the
 * copy's index `copyIndex` the hook answers the cached mode from); each reading is charged to `ledger` as 'meter'.
 */
export function startClientMeter(
  dir: string,
  origins: readonly string[],
  ledger?: CpuLedger,
  copyIndex?: string,
): FetchMeter {
  const startedAt = Date.now();
  const counters = new ClientCounters(dir);
  let processes: ProcessCounters[] = [];
  const read = (poll: CounterPoll): void => {
    processes = counters.poll();
    const local = copyIndex ? { localBytes: total(processes, 'localBytes') } : {};
    poll.push(total(processes, 'bytes'), {
      requests: total(processes, 'requests'),
      failures: total(processes, 'failures'),
      ...local,
    });
  };
  const seen = () => processes.some((p) => p.last.requests > 0 || (p.last.localRequests ?? 0) > 0);
  const meter = counterMeter(read, READ_EVERY_MS, ledger, () => ({
    seriesSource: MESSAGES.windowSource,
    wholeRunSource: MESSAGES.wholeRunSource,
    network: clientNetworkUse(processes, (Date.now() - startedAt) / 1000),
    networkOfBlock: (block, fromMs, toMs) =>
      clientNetworkUse(
        processes.map((p) => countersOfBlock(p, block, fromMs)),
        (toMs - fromMs) / 1000,
      ),
    blockSource: MESSAGES.blockSource,
    ...(seen() ? {} : { proofLimit: MESSAGES.unseen }),
  }));
  const jobEnv = {
    DSA_NET_DIR: dir,
    DSA_NET_ORIGINS: origins.join(','),
    ...(copyIndex ? { DSA_NET_COPY: copyIndex } : {}),
  };
  return { ...meter, jobEnv };
}

/**
 * A process's counters in one block of one launch: the rise of its totals from its last line of an earlier block to its
 * last line tagged with `block` (the hook writes the old block's line before it counts a request in a new one), and the
 * timings those lines carried. Its most in flight is the most up to the block's end (a running most).
 */
function countersOfBlock(p: ProcessCounters, block: number, fromMs: number): ProcessCounters {
  const lines = p.lines ?? [p.last];
  const before = lines.filter((l) => l.block < block).at(-1);
  const within = lines.filter((l) => l.block === block);
  const end = within.at(-1);
  const zero = { requests: 0, bytes: 0, busyMs: 0, failures: 0, localRequests: 0, localBytes: 0 };
  if (!end)
    return {
      last: { ...p.last, ...zero, statuses: {}, firstMs: null, lastEndMs: null },
      firstByteMs: [],
      requestMs: [],
    };
  const start = before ?? { ...zero, statuses: {} };
  const last: CounterLine = {
    ...end,
    requests: end.requests - start.requests,
    bytes: Math.max(0, end.bytes - start.bytes),
    busyMs: Math.max(0, end.busyMs - start.busyMs),
    failures: end.failures - start.failures,
    localRequests: (end.localRequests ?? 0) - (start.localRequests ?? 0),
    localBytes: Math.max(0, (end.localBytes ?? 0) - (start.localBytes ?? 0)),
    statuses: statusRise(end.statuses, start.statuses),
    firstMs: end.firstMs === null ? null : Math.max(end.firstMs, fromMs),
  };
  // A process that sent nothing to the origin in the block (a worker of an earlier one), or whose requests under it all
  // ended before the block's window (an old epoch's worker, at the switch, among the loader's batches carried over), had
  // nothing in flight in it: clamped to the window's start, it was counted beside the next epoch's workers.
  if (last.requests === 0 || (last.lastEndMs !== null && last.lastEndMs < fromMs)) last.firstMs = null;
  return {
    last,
    firstByteMs: within.flatMap((l) => l.firstByteMs),
    requestMs: within.flatMap((l) => l.requestMs),
  };
}

/**
 * The most requests that could have been in flight at once: each process's most, summed over the processes that were
 * fetching at the same time (loader workers of one epoch, not the workers of every epoch).
 */
function mostAtOnce(last: readonly CounterLine[]): number {
  const spans = last
    .filter((l) => l.firstMs !== null)
    .map((l) => ({ from: l.firstMs!, to: Math.max(l.firstMs!, l.lastEndMs ?? l.t), most: l.maxInFlight }));
  let most = 0;
  for (const span of spans) {
    const overlapping = spans.filter((other) => other.from <= span.from && other.to >= span.from);
    most = Math.max(
      most,
      overlapping.reduce((sum, other) => sum + other.most, 0),
    );
  }
  return most;
}

/** What one run fetched, from its processes' counters: totals from their last lines, timings from all. */
export function clientNetworkUse(processes: readonly ProcessCounters[], sec: number): NetworkUse {
  const last = processes.map((p) => p.last);
  const statuses: Record<string, number> = {};
  for (const line of last)
    for (const [status, count] of Object.entries(line.statuses)) statuses[status] = (statuses[status] ?? 0) + count;
  const firstBytes = processes.flatMap((p) => p.firstByteMs);
  const requestTimes = processes.flatMap((p) => p.requestMs);
  const failures = total(processes, 'failures');
  return {
    requests: total(processes, 'requests'),
    tunnels: 0,
    originBytes: total(processes, 'bytes'),
    // The cached mode's answers from the local copy, made in the job by its hook (python/ds_analyzer/_serve.py).
    cacheBytes: total(processes, 'localBytes'),
    cacheHits: total(processes, 'localRequests'),
    otherBytes: 0,
    statuses,
    failures,
    lastFailure: failures > 0 ? 'a request to the origin failed in the job (counted in its HTTP client)' : null,
    firstByteMs: tailQuantiles(firstBytes),
    requestMs: requestTimes.length > 0 ? { mean: mean(requestTimes), ...tailQuantiles(requestTimes)! } : null,
    // The time requests were open, summed over processes, per second of the run: the mean in flight.
    meanInFlight: sec > 0 ? total(processes, 'busyMs') / 1000 / sec : 0,
    maxInFlight: mostAtOnce(last),
    capBytesPerSec: null,
    meter: 'client',
  };
}
