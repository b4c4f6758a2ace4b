/**
 * The page cache's hit ratio as this machine's kernel gives it, against the
 * simulated kernel (src/whatif/kernel-page-cache.ts) and exact LRU: a
 * generated dataset of JPEG-sized files read in shuffled epochs inside a
 * memory cgroup at 10% to 90% of it (bench/python/kernel_hit_ratio.py), and
 * the time the what-if takes to simulate the curve. Needs root and a memory
 * cgroup (v1 or v2); says why and measures only the time otherwise.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { mulberry32 } from '../src/random.js';
import { sizeHistogram } from '../src/analysis/size-histogram.js';
import { sizesFromHistogram } from '../src/whatif/size-distribution.js';
import { kernelPageCache, lruPageCache } from '../src/whatif/page-cache-curve.js';
import { simulateLruEpochs } from '../src/whatif/hit-ratio.js';
import { detectCgroups } from '../src/system/cgroups/cgroups.js';

const SCRIPT = fileURLToPath(new URL('../../bench/python/kernel_hit_ratio.py', import.meta.url));
const DATASET_BYTES = 150 * 2 ** 20;
const EPOCHS = 8;
const FRACTIONS = [0.1, 0.25, 0.5, 0.75, 0.9];

export async function bench(): Promise<void> {
  const random = mulberry32(7);
  const sizes: number[] = [];
  for (let total = 0; total < DATASET_BYTES; ) {
    // ImageNet-like: log-normal around 100 kB.
    const size = Math.round(100_000 * Math.exp(0.5 * gaussian(random)));
    sizes.push(size);
    total += size;
  }
  const datasetBytes = sizes.reduce((a, b) => a + b, 0);
  const histogram = sizeHistogram(sizes);
  const sample = sizesFromHistogram(histogram, Math.min(sizes.length, 2048));
  const started = performance.now();
  const kernel = kernelPageCache(sample, sample.reduce((a, b) => a + b, 0) / datasetBytes, 1);
  kernel.steady(datasetBytes / 2);
  console.log(
    `the simulated kernel's curve, ${sample.length} files at 19 sizes: ${(performance.now() - started).toFixed(0)} ms (a whatif pays it once)`,
  );

  const skip = unavailable();
  if (skip) {
    console.log(`hit ratios against this kernel: skipped: ${skip}`);
    return;
  }
  const root = mkdtempSync(join(tmpdir(), 'dsa-bench-kernel-cache-'));
  try {
    sizes.forEach((size, i) => {
      const dir = join(root, `c${i % 10}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `f${i}.jpg`), Buffer.alloc(size, i % 251));
    });
    const run = await execa('python3', [SCRIPT, root, '--fractions', FRACTIONS.join(','), '--epochs', String(EPOCHS)]);
    const lines = run.stdout.split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const kernelName = (lines[0] as { kernel: string }).kernel;
    const lru = lruPageCache(simulateLruEpochs(sizesFromHistogram(histogram, sizes.length), 3, 1), 1);
    console.log(
      `${sizes.length} files, ${(datasetBytes / 2 ** 20).toFixed(0)} MiB, ${EPOCHS} epochs a size, kernel ${kernelName}; steady = epochs 2 on`,
    );
    let worstKernel = 0;
    let worstLru = 0;
    for (const fraction of FRACTIONS) {
      const epochs = lines.filter((l) => l.fraction === fraction) as {
        epoch: number;
        hitRatio: number;
        cacheHeldBytes: number;
      }[];
      const steady = epochs.filter((e) => e.epoch >= 2);
      const measured = steady.reduce((a, e) => a + e.hitRatio, 0) / steady.length;
      const held = epochs[epochs.length - 1].cacheHeldBytes;
      const k = kernel.steady(held);
      const l = lru.steady(held);
      worstKernel = Math.max(worstKernel, Math.abs(k - measured));
      worstLru = Math.max(worstLru, Math.abs(l - measured));
      console.log(
        `  held ${((held / datasetBytes) * 100).toFixed(0)}%: measured ${measured.toFixed(3)}, kernel's lists ${k.toFixed(3)} (${signed(k - measured)}), exact LRU ${l.toFixed(3)} (${signed(l - measured)})`,
      );
    }
    console.log(
      `worst error: kernel's lists ${worstKernel.toFixed(3)} (goal 0.03: ratio ${(worstKernel / 0.03).toFixed(2)}), exact LRU ${worstLru.toFixed(3)}`,
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

function unavailable(): string | null {
  if (process.geteuid?.() !== 0) return 'needs root to make a memory cgroup and drop the caches';
  if (!detectCgroups().controllers.memory.version) return 'no memory cgroup controller';
  return null;
}

function signed(x: number): string {
  return `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(3)}`;
}

/** Standard normal by Box-Muller. */
function gaussian(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}
