// The watchdog of a launch (run-launch.ts polls it): when the job's iteration count last grew, on the profiler's clock,
// and its processes' CPU since; hangOf (analysis/stalls.ts) decides whether the job looks hung.
import { hangOf, STALL_LIMITS, type Hang } from '../analysis/stalls.js';
import type { ResourceSample } from '../schema/profile.js';
import type { ProcessEvents } from './events-reader.js';

/** Each process's latest iterations: the median needs no more, and a poll stays cheap. */
const WATCHED_ITERATIONS = 200;

export class HangWatch {
  private seen = { iterations: 0, at: Date.now(), cpuSec: null as number | null };

  /** `minSec`: the least silence called hung (profile --hang-timeout). */
  constructor(private readonly minSec: number = STALL_LIMITS.hungMinSec) {}

  /** Reads a poll's events and the latest resource sample (null: none taken); the hang, or null. */
  check(processes: readonly ProcessEvents[], latest: ResourceSample | null, nowMs: number): Hang | null {
    const iterations = processes.reduce((sum, p) => sum + p.iterations.length, 0);
    if (iterations > this.seen.iterations) {
      this.seen = { iterations, at: nowMs, cpuSec: latest?.jobCpuSec ?? null };
      return null;
    }
    const sec = (nowMs - this.seen.at) / 1000;
    const cpuShare =
      latest !== null && this.seen.cpuSec !== null && sec > 0 ? (latest.jobCpuSec - this.seen.cpuSec) / sec : null;
    const recent = processes.flatMap((p) => p.iterations.slice(-WATCHED_ITERATIONS));
    return hangOf(recent, this.seen.at, nowMs, this.minSec, cpuShare);
  }
}
