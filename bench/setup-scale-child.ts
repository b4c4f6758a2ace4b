// The set-up steps of bench/setup-scale, timed in a process of their own so
// that its peak RSS (VmHWM) is theirs alone; prints one JSON line.
//
//   node dist/bench/setup-scale-child.js DIR
import { readFileSync } from 'node:fs';
import { listDataset } from '../src/system/dataset/dataset.js';
import { evict, residency, warm } from '../src/system/page-cache/page-cache.js';

const [dir] = process.argv.slice(2);
const steps: Record<string, number | string> = {};
const time = async <T>(name: string, run: () => Promise<T>): Promise<T> => {
  const started = performance.now();
  const result = await run();
  steps[name] = Number(((performance.now() - started) / 1000).toFixed(2));
  return result;
};
const dataset = await time('walkSec', () => listDataset([dir]));
const hot = await time('residencyHotSec', () => residency(dataset.files));
await time('evictSec', () => evict(dataset.files, { sync: true }));
const cold = await time('residencyColdSec', () => residency(dataset.files));
const warmed = await time('warmColdSec', () => warm(dataset.files));
const after = await time('residencyAfterWarmSec', () => residency(dataset.files));
const again = await time('warmHotSec', () => warm(dataset.files));
const peakKiB = Number(/^VmHWM:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0);
console.log(
  JSON.stringify({
    files: dataset.files.length,
    bytes: dataset.bytes,
    ...steps,
    residentHot: hot.fraction,
    residentCold: cold.fraction,
    residentAfterWarm: after.fraction,
    warmAdvised: warmed.advisedFiles,
    warmRead: warmed.files - warmed.advisedFiles,
    warmAgainRead: again.files,
    peakRssMB: Math.round(peakKiB / 1024),
  }),
);
