// The profiler's own CPU, by component: on a busy job it shows up as stall, and the ledger says who spent it. Work is
// timed on the thread's CPU clock (preemption does not count), or the process's where libc cannot be bound.
import { loadLibc, type LibcBindings } from './libc.js';

/** The parts of the profiler that charge their own CPU. */
export const LEDGER_COMPONENTS = ['sampler', 'events', 'keeper', 'meter', 'warming', 'eviction'] as const;

/** A component of the profiler ('meter': a data source's meter; 'events': the job's event files). */
export type LedgerComponent = (typeof LEDGER_COMPONENTS)[number];

/** What one component was charged. */
export interface LedgerEntry {
  /** CPU seconds of the component's calls. */
  cpuSec: number;
  /** Calls charged (or spans started). */
  calls: number;
}

/** Every component's entry at one moment; a difference of two readings is a reading too (`since`). */
export type LedgerReading = Record<LedgerComponent, LedgerEntry>;

/** A component's account in a ledger: what the component is handed to charge its own work to. */
export interface CpuAccount {
  /** Runs `work` and charges its CPU; returns what `work` returned (and throws what it threw, charged all the same). */
  charge<T>(work: () => T): T;
  /** Starts timing work that runs in synchronous slices (an async loop between its awaits); call the answer to stop. */
  start(): () => void;
  /** Adds CPU the component measured itself (the keepers time their work on the same clock). */
  add(cpuSec: number, calls?: number): void;
}

/** CPU seconds on some clock that only moves forward while the thread (or process) runs. */
export type CpuClock = () => number;

/** The thread's CPU clock through `libc` (this machine's by default), else the process's: CPU, never wall time. */
export function threadCpuClock(libc?: LibcBindings): CpuClock {
  const load = libc ? { ok: true as const, libc } : loadLibc();
  if (!load.ok || load.libc.threadCpuSec() < 0) return processCpuClock;
  const bound = load.libc;
  return () => bound.threadCpuSec();
}

/** CPU seconds of the whole process (user + system). */
export function processCpuClock(): number {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1e6;
}

/** Readings of the clock taken to measure what one costs. */
const CLOCK_COST_READINGS = 64;

/** The profiler's CPU, charged by component (a component given no ledger costs nothing). Charges do not nest. */
export class CpuLedger {
  private readonly entries: LedgerReading = emptyReading();
  private clock: CpuClock | undefined;
  private clockCost: number | undefined;
  private readonly accounts = new Map<LedgerComponent, CpuAccount>();

  /** `clock`: the CPU clock to charge on (tests pass a fake); default threadCpuClock(), bound at the first charge. */
  constructor(clock?: CpuClock) {
    this.clock = clock;
  }

  /** The account of `component`, one object per component. */
  account(component: LedgerComponent): CpuAccount {
    let account = this.accounts.get(component);
    if (!account) {
      const entry = this.entries[component];
      account = {
        charge: <T>(work: () => T): T => {
          const now = this.now();
          const started = now();
          try {
            return work();
          } finally {
            entry.cpuSec += Math.max(0, now() - started);
            entry.calls++;
          }
        },
        start: () => {
          const now = this.now();
          const started = now();
          let stopped = false;
          return () => {
            if (stopped) return;
            stopped = true;
            entry.cpuSec += Math.max(0, now() - started);
            entry.calls++;
          };
        },
        add: (cpuSec, calls = 1) => {
          entry.cpuSec += Math.max(0, cpuSec);
          entry.calls += calls;
        },
      };
      this.accounts.set(component, account);
    }
    return account;
  }

  /** Runs `work` and charges its CPU to `component`. */
  charge<T>(component: LedgerComponent, work: () => T): T {
    return this.account(component).charge(work);
  }

  /** `fn`, charging each call to `component` (a timer's callback, for instance). */
  wrap<A extends unknown[], R>(component: LedgerComponent, fn: (...args: A) => R): (...args: A) => R {
    const account = this.account(component);
    return (...args) => account.charge(() => fn(...args));
  }

  /** A copy of every component's entry now. */
  reading(): LedgerReading {
    const copy = emptyReading();
    for (const component of LEDGER_COMPONENTS) copy[component] = { ...this.entries[component] };
    return copy;
  }

  /** What each component was charged since `earlier` (a reading of this ledger): one mode's share, say. */
  since(earlier: LedgerReading): LedgerReading {
    return readingDifference(this.reading(), earlier);
  }

  /** CPU seconds one clock reading costs, measured once: the ledger itself added `calls x 2 x clockCostSec()`. */
  clockCostSec(): number {
    if (this.clockCost === undefined) {
      const now = this.now();
      const started = now();
      for (let i = 1; i < CLOCK_COST_READINGS; i++) now();
      this.clockCost = Math.max(0, now() - started) / CLOCK_COST_READINGS;
    }
    return this.clockCost;
  }

  private now(): CpuClock {
    this.clock ??= threadCpuClock();
    return this.clock;
  }
}

/** Zero for every component. */
export function emptyReading(): LedgerReading {
  return Object.fromEntries(
    LEDGER_COMPONENTS.map((component) => [component, { cpuSec: 0, calls: 0 }]),
  ) as LedgerReading;
}

/** What each component was charged between two readings of one ledger, `earlier` and `later`. */
export function readingDifference(later: LedgerReading, earlier: LedgerReading): LedgerReading {
  const out = emptyReading();
  for (const component of LEDGER_COMPONENTS) {
    out[component].cpuSec = Math.max(0, later[component].cpuSec - earlier[component].cpuSec);
    out[component].calls = Math.max(0, later[component].calls - earlier[component].calls);
  }
  return out;
}

/** CPU seconds of every component together in `reading`. */
export function totalCpuSec(reading: LedgerReading): number {
  return LEDGER_COMPONENTS.reduce((sum, component) => sum + reading[component].cpuSec, 0);
}
