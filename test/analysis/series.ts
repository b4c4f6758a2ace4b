/**
 * Seeded synthetic iteration series for the analysis tests. Deterministic:
 * the same seed gives the same series on every machine.
 */
import type { Iteration } from '../../src/schema/profile.js';
import { mulberry32 } from '../../src/random.js';

/** mulberry32: a tiny seeded 32-bit PRNG, the emulator's own. */
export const prng = mulberry32;

/** Standard normal draws by Box-Muller. */
export function normal(rand: () => number): () => number {
  return () => {
    const u = 1 - rand();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
  };
}

/** Non-negative value mean * (1 + cv * N(0,1)). */
export function jitter(gauss: () => number, mean: number, cv: number): number {
  return Math.max(0, mean * (1 + cv * gauss()));
}

export interface SeriesSpec {
  /** Iterations. */
  n: number;
  /** Seed of the PRNG. */
  seed: number;
  /** Mean compute time per iteration, ms. */
  computeMs: number;
  /** Mean wait per iteration, ms, as a function of the iteration index (default 0). */
  waitMs?: (i: number) => number;
  /** Coefficient of variation of the noise on each part (default 0.05). */
  cv?: number;
  /** Multiplier of the first `slowStart` iterations' times (default none). */
  slowFactor?: number;
  /** Iterations slowed by `slowFactor`. */
  slowStart?: number;
  /** Samples per batch (default 32). */
  samples?: number;
}

/** An iteration series with Gaussian noise on wait and compute. */
export function series(spec: SeriesSpec): Iteration[] {
  const gauss = normal(prng(spec.seed));
  const cv = spec.cv ?? 0.05;
  const out: Iteration[] = [];
  let t = 1_700_000_000_000;
  for (let i = 0; i < spec.n; i++) {
    const slow = i < (spec.slowStart ?? 0) ? (spec.slowFactor ?? 1) : 1;
    const baseWait = spec.waitMs ? spec.waitMs(i) : 0;
    const waitMs = baseWait > 0 ? jitter(gauss, baseWait * slow, cv) : 0;
    const computeMs = jitter(gauss, spec.computeMs * slow, cv);
    t += waitMs;
    out.push({ i, t, waitMs, computeMs, samples: spec.samples ?? 32 });
    t += computeMs;
  }
  return out;
}

/**
 * A DataLoader with `workers` workers, prep-bound: each worker delivers a whole
 * batch, so the loop waits `burstWaitMs` for the first batch of each round and
 * ~0.3 ms for the rest (DESIGN.md: 450, 0, 450, 0 ms; median 0.3, mean 217).
 */
export function bursty(n: number, workers: number, burstWaitMs: number, seed: number, cv = 0.05): Iteration[] {
  return series({ n, seed, computeMs: 50, cv, waitMs: (i) => (i % workers === 0 ? burstWaitMs : 0.3) });
}

/** Per-iteration times (wait + compute) of a series. */
export function iterTimes(iterations: Iteration[]): number[] {
  return iterations.map((it) => it.waitMs + it.computeMs);
}
