import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateDataset } from '../../src/emulator/generate-dataset.js';
import { detectCgroups } from '../../src/system/cgroups.js';
import { canThrottle, emulatorArgv, startCli } from './helpers.js';

interface PointJson {
  point: { kind: string; cacheBytes?: number };
  predictedSamplesPerSec: number;
  measuredSamplesPerSec: number | null;
  residentBytes: number | null;
  relativeError: number | null;
  predictedHitRatio: number | null;
  measuredHitRatio: number | null;
  note: string;
}

/**
 * A cache point for real: the emulated job on throttled storage, its page
 * cache held at half the dataset by a memory cgroup whose limit follows the
 * dataset's measured residency. Needs root (memory and blkio/io cgroups).
 */
test('validate holds the page cache at a target share of the dataset and predicts at the cache the job had', async (t) => {
  const memory = detectCgroups().controllers.memory;
  const throttle = await canThrottle();
  if (!memory.writable || throttle) {
    t.skip(`needs a writable memory cgroup and storage throttling (root): ${memory.writable ? throttle : memory.reason}`);
    return;
  }
  const work = mkdtempSync(join(tmpdir(), 'dsa-e2e-validate-cache-'));
  const data = join(work, 'data');
  await generateDataset(data, { files: 64, fileBytes: 1 << 20, seed: 7 });
  const profile = join(work, 'p.json');
  const job = emulatorArgv(data, ['--batch-size', '4', '--compute-ms', '10', '--prep-ms', '2', '--workers', '2']);
  const profiled = await startCli(
    ['profile', '--data', data, '--out', profile, '--storage-bw', '20MB/s', '--precision', '10%', '--min-iterations', '20', '--max-iterations', '200', '--', ...job],
    { cwd: work },
  );
  assert.equal(profiled.exitCode, 0, profiled.all);

  const result = await startCli(['validate', profile, '--cache', '50%', '--epochs', '12', '--no-control', '--json'], { cwd: work });
  assert.equal(result.exitCode, 0, result.all);
  const report = JSON.parse(result.stdout) as { results: PointJson[] };
  assert.equal(report.results.length, 1, 'the control was left out; one cache point');
  const [point] = report.results;
  t.diagnostic(
    `${point.note}; predicted ${point.predictedSamplesPerSec.toFixed(1)}, measured ${point.measuredSamplesPerSec?.toFixed(1)} samples/s; ` +
      `hit ratio predicted ${point.predictedHitRatio?.toFixed(2)}, measured ${point.measuredHitRatio?.toFixed(2)}`,
  );
  const target = point.point.cacheBytes!;
  const runs = join(work, 'reports');
  const [runDir] = readdirSync(runs);
  const [pointDir] = readdirSync(join(runs, runDir));
  const capSteps = readFileSync(join(runs, runDir, pointDir, 'cache-cap.jsonl'), 'utf8').trim().split('\n');
  assert.ok(capSteps.length > 10, 'the cap\'s steps are saved beside the job\'s logs');
  if (point.residentBytes === null || Math.abs(point.residentBytes - target) >= 0.25 * target) {
    t.diagnostic(`cap steps (every 10th, MiB):\n${capSteps.filter((_, k) => k % 10 === 0).map((line) => mibLine(line)).join('\n')}`);
  }
  assert.ok(point.residentBytes !== null, 'residency was read over the measured window');
  // Held near the target: not the whole dataset (what a guessed headroom allowed) and not nothing.
  assert.ok(Math.abs(point.residentBytes - target) < 0.25 * target, `resident ${point.residentBytes} vs target ${target}`);
  assert.match(point.note, /mincore/);
  assert.ok(point.measuredSamplesPerSec! > 0 && point.relativeError !== null);
  assert.ok(point.measuredHitRatio !== null && point.measuredHitRatio > 0.1 && point.measuredHitRatio < 0.9, 'half the dataset cached: some reads hit, some miss');
});

function mibLine(line: string): string {
  const step = JSON.parse(line) as Record<string, number | null>;
  return Object.entries(step)
    .map(([key, bytes]) => `${key.replace(/Bytes$/, '')} ${bytes === null ? '-' : (bytes / 2 ** 20).toFixed(1)}`)
    .join(', ');
}
