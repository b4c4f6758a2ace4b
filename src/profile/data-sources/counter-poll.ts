// What the fetch meters that read a counter of their own share (the FUSE daemon's sockets, the metering proxy, the
// job's HTTP clients): the readings since the run started, taken by a timer that never keeps the process alive, and
// nothing to attach to the job, whose tree is not the counter. Each meter keeps only its counter and what it reports.
import type { ResourceSample } from '../../schema/profile.js';
import type { CpuLedger } from '../../system/kernel/cpu-ledger.js';
import { counterAt } from '../window-rates.js';
import type { CounterReading, FetchMeter, FetchReadings } from './fetch-meter.js';

/** A counter read every few milliseconds over one run. */
export class CounterPoll {
  /** The bytes the counter rose by since the run started, at each reading (the first: 0 at the start). */
  readonly readings: CounterReading[] = [{ t: Date.now(), bytes: 0 }];
  private readonly timer: NodeJS.Timeout;

  /** Calls `poll` every `everyMs` (charged to `ledger` as 'meter'); `poll` records what it reads with `push`. */
  constructor(poll: () => unknown, everyMs: number, ledger?: CpuLedger) {
    this.timer = setInterval(ledger ? ledger.wrap('meter', poll) : poll, everyMs);
    this.timer.unref();
  }

  /** Records a reading taken now, with the requests, failures and local bytes where the counter has them. */
  push(bytes: number, extra?: { requests?: number; failures?: number; localBytes?: number }): void {
    this.readings.push({ t: Date.now(), bytes, ...extra });
  }

  /** Stops the timer; the meter takes its last reading after. */
  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * The readings placed at the run's resource samples (the measured window's evidence), or as taken without any; then
   * the readings taken after the last sample as they are: the sampler stops at the job's exit, and the requests that
   * failed in its last moments (the failures that ended it) are counted only in the meter's last reading.
   */
  seriesAt(resources: readonly ResourceSample[]): CounterReading[] {
    if (resources.length === 0) return this.readings;
    const local = this.readings.some((r) => r.localBytes !== undefined);
    const placed = resources.map((s) => ({
      t: s.t,
      bytes: counterAt(this.readings, s.t, (r) => r.bytes) ?? 0,
      ...(local ? { localBytes: counterAt(this.readings, s.t, (r) => r.localBytes ?? 0) ?? 0 } : {}),
      ...this.requestsAt(s.t),
    }));
    const lastSampled = resources[resources.length - 1].t;
    return [...placed, ...this.readings.filter((r) => r.t > lastSampled)];
  }

  /** The requests and failures of the last reading at or before `t` (counts do not interpolate); none uncounted. */
  private requestsAt(t: number): Pick<CounterReading, 'requests' | 'failures'> {
    let at: CounterReading | undefined;
    for (const r of this.readings) {
      if (r.t > t) break;
      if (r.failures !== undefined) at = r;
    }
    return at ? { requests: at.requests ?? 0, failures: at.failures! } : {};
  }

  /** The last reading's bytes. */
  get lastBytes(): number {
    return this.readings[this.readings.length - 1].bytes;
  }
}

/** What a counter's meter says beyond its series and total: how it measured, and what else the run fetched. */
type CounterReport = Omit<FetchReadings, 'series' | 'wholeRunBytes' | 'otherReads' | 'ownCounter'>;

/**
 * A meter of a counter of its own: `read` (which records with the poll's push) every `everyMs`, charged to `ledger` as
 * 'meter', and once more at the finish, after which `report` says the rest.
 */
export function counterMeter(
  read: (poll: CounterPoll) => unknown,
  everyMs: number,
  ledger: CpuLedger | undefined,
  report: () => CounterReport,
): FetchMeter {
  const poll: CounterPoll = new CounterPoll(() => read(poll), everyMs, ledger);
  return {
    attach: () => {},
    async finish(resources) {
      poll.stop();
      await read(poll);
      const own = { series: poll.seriesAt(resources), wholeRunBytes: poll.lastBytes, otherReads: () => null };
      return { ...own, ownCounter: true, ...report() };
    },
  };
}

/** Each answer status's count rise from `start` to `end`, where it rose. */
export function statusRise(end: Record<string, number>, start: Record<string, number>): Record<string, number> {
  const rise: Record<string, number> = {};
  for (const [status, count] of Object.entries(end))
    if (count > (start[status] ?? 0)) rise[status] = count - (start[status] ?? 0);
  return rise;
}
