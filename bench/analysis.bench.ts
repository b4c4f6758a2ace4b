/**
 * Benchmark of the analysis layer's hot path: the adaptive stopping decision,
 * which the profiler calls about every 250 ms on a growing series.
 * Run: npm run bench -- analysis
 */
import { StoppingTracker, stoppingDecision } from '../src/analysis/stopping.js';
import { analyze } from '../src/analysis/split.js';
import type { Iteration } from '../src/schema/profile.js';

function makeSeries(n: number, workers: number): Iteration[] {
  let seed = 12345;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  return Array.from({ length: n }, (_, i) => ({
    i,
    t: i * 100,
    waitMs: i % workers === 0 ? 400 * (0.9 + 0.2 * rand()) : 0.3,
    computeMs: 50 * (0.9 + 0.2 * rand()),
    samples: 32,
  }));
}

function time(label: string, runs: number, fn: () => void): void {
  fn();
  const start = performance.now();
  for (let k = 0; k < runs; k++) fn();
  const ms = (performance.now() - start) / runs;
  console.log(`${label.padEnd(40)} ${ms.toFixed(2)} ms/call`);
}

export async function bench(): Promise<void> {
  console.log('the profiler calls stoppingDecision every 250 ms: the cost should stay far below that');
  for (const n of [1_000, 10_000, 100_000]) {
    const its = makeSeries(n, 4);
    time(`stoppingDecision, ${n} iterations`, n >= 100_000 ? 5 : 50, () =>
      stoppingDecision(its, { precision: 0.001, minIterations: 100, maxIterations: 1e9, workers: 4 }),
    );
  }
  // The incremental tracker against the plain rule at 100,000 iterations, 50 new ones per check, in this run.
  const its = makeSeries(100_000, 4);
  const opts = { precision: 0.0001, minIterations: 50, maxIterations: 1e7, workers: 4 };
  const tracker = new StoppingTracker(4);
  tracker.decide(its.slice(0, 99_000), opts);
  let n = 99_000;
  const started = performance.now();
  for (; n <= 100_000; n += 50) tracker.decide(its.slice(0, n), opts);
  const trackerMs = (performance.now() - started) / 21;
  const plainStarted = performance.now();
  for (let k = 0; k < 5; k++) stoppingDecision(its, opts);
  const plainMs = (performance.now() - plainStarted) / 5;
  console.log(
    `${'StoppingTracker.decide, 100000 iterations'.padEnd(40)} ${trackerMs.toFixed(3)} ms/call: ${(plainMs / trackerMs).toFixed(0)}x faster than the plain rule here`,
  );
  time('analyze, empty profile', 1000, () => analyze({}));
}
