/**
 * The page-cache hit-ratio curve for 1,000,000 files over 3 epochs (fresh
 * permutation each), every cache size at once (Mattson stack distances on a
 * Fenwick tree), against brute-force LRU runs at a few sizes: time, and the
 * hit ratios of both.
 */
import { lruHitRatio, simulateLruEpochs, steadyLruHitRatio } from '../src/whatif/hit-ratio.js';
import { simulateLru } from '../src/whatif/lru-reference.js';
import { sizeHistogram, sizesFromHistogram } from '../src/whatif/size-distribution.js';
import { mixSeed, mulberry32 } from '../src/emulator/rng.js';

const ITEMS = 1_000_000;
const EPOCHS = 3;
const SEED = 1;

export async function bench(): Promise<void> {
  // ImageNet-like sizes: log-normal around 110 kB.
  const random = mulberry32(42);
  const raw = Array.from({ length: ITEMS }, () => Math.round(110_000 * Math.exp(0.6 * gaussian(random))));
  const sizes = sizesFromHistogram(sizeHistogram(raw), ITEMS);

  const started = process.cpuUsage();
  const t0 = performance.now();
  const curve = simulateLruEpochs(sizes, EPOCHS, SEED);
  const onePassMs = performance.now() - t0;
  const cpu = process.cpuUsage(started);
  console.log(`one pass, ${ITEMS.toLocaleString('en')} files x ${EPOCHS} epochs, all cache sizes: ${onePassMs.toFixed(0)} ms wall, ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms CPU`);

  const trace = new Int32Array(ITEMS * EPOCHS);
  for (let e = 0; e < EPOCHS; e++) {
    const r = mulberry32(mixSeed(SEED, e));
    const order = new Int32Array(ITEMS).map((_, i) => i);
    for (let i = ITEMS - 1; i > 0; i--) {
      const j = Math.floor(r() * (i + 1));
      const tmp = order[i];
      order[i] = order[j];
      order[j] = tmp;
    }
    trace.set(order, e * ITEMS);
  }
  let bruteMs = 0;
  const rows: string[] = [];
  for (const fraction of [0.25, 0.5, 0.75, 0.9]) {
    const cacheBytes = fraction * curve.datasetBytes;
    const t1 = performance.now();
    const reference = simulateLru(trace, sizes, cacheBytes, ITEMS);
    const ms = performance.now() - t1;
    bruteMs += ms;
    const bruteSteady = (reference.hitBytes[1] + reference.hitBytes[2]) / (reference.totalBytes[1] + reference.totalBytes[2]);
    const steady = steadyLruHitRatio(curve, cacheBytes);
    const first = lruHitRatio(curve, cacheBytes, 0);
    rows.push(
      `  M/D ${fraction.toFixed(2)}: steady hit ratio ${steady.toFixed(4)} (brute force ${bruteSteady.toFixed(4)}), first epoch ${first.toFixed(4)}; brute-force run ${ms.toFixed(0)} ms`,
    );
  }
  console.log(rows.join('\n'));
  console.log(`brute-force LRU, 4 sizes: ${bruteMs.toFixed(0)} ms (${(bruteMs / 4).toFixed(0)} ms per size); one pass / one brute-force size = ${(onePassMs / (bruteMs / 4)).toFixed(2)}`);
}

/** Standard normal by Box-Muller. */
function gaussian(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}
