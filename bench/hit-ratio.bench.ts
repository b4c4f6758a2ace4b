/**
 * The page-cache hit-ratio curve for 1,000,000 files over 3 epochs (fresh
 * permutation each), every cache size at once (Mattson stack distances on a
 * Fenwick tree), against brute-force LRU runs at a few sizes: time, and the
 * hit ratios of both.
 */
import { lruHitRatio, simulateLruEpochs, steadyLruHitRatio } from '../src/whatif/hit-ratio.js';
import { simulateLru } from '../test/whatif/lru-reference.js';
import { sizeHistogram } from '../src/analysis/size-histogram.js';
import { sizesFromHistogram } from '../src/whatif/size-distribution.js';
import { mulberry32 } from '../src/random.js';

const ITEMS = 1_000_000;
const EPOCHS = 3;
const SEED = 1;

export async function bench(): Promise<void> {
  // ImageNet-like sizes: log-normal around 110 kB.
  const random = mulberry32(42);
  const raw = Array.from({ length: ITEMS }, () => Math.round(110_000 * Math.exp(0.6 * gaussian(random))));
  const sizes = sizesFromHistogram(sizeHistogram(raw), ITEMS);

  const trace = new Int32Array(ITEMS * EPOCHS);
  const started = process.cpuUsage();
  const t0 = performance.now();
  const curve = simulateLruEpochs(sizes, EPOCHS, SEED, trace);
  const onePassMs = performance.now() - t0;
  const cpu = process.cpuUsage(started);
  const onePassCpuMs = (cpu.user + cpu.system) / 1000;
  console.log(
    `one pass, ${ITEMS.toLocaleString('en')} files x ${EPOCHS} epochs, all cache sizes: ${onePassMs.toFixed(0)} ms wall, ${onePassCpuMs.toFixed(0)} ms CPU`,
  );

  let bruteMs = 0;
  const rows: string[] = [];
  for (const fraction of [0.25, 0.5, 0.75, 0.9]) {
    const cacheBytes = fraction * curve.datasetBytes;
    const c1 = process.cpuUsage();
    const reference = simulateLru(trace, sizes, cacheBytes, ITEMS);
    const c = process.cpuUsage(c1);
    const ms = (c.user + c.system) / 1000;
    bruteMs += ms;
    const bruteSteady =
      (reference.hitBytes[1] + reference.hitBytes[2]) / (reference.totalBytes[1] + reference.totalBytes[2]);
    const steady = steadyLruHitRatio(curve, cacheBytes);
    const first = lruHitRatio(curve, cacheBytes, 0);
    rows.push(
      `  M/D ${fraction.toFixed(2)}: steady hit ratio ${steady.toFixed(4)} (brute force ${bruteSteady.toFixed(4)}), first epoch ${first.toFixed(4)}; brute-force run ${ms.toFixed(0)} ms CPU`,
    );
  }
  console.log(rows.join('\n'));
  console.log(
    `brute-force LRU (same trace), 4 sizes: ${bruteMs.toFixed(0)} ms CPU (${(bruteMs / 4).toFixed(0)} ms per size); ` +
      `one pass for all sizes / one brute-force size = ${(onePassCpuMs / (bruteMs / 4)).toFixed(2)} (CPU time)`,
  );
}

/** Standard normal by Box-Muller. */
function gaussian(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}
