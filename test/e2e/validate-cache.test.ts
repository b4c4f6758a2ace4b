import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateDataset } from '../../src/emulator/generate-dataset.js';
import { canThrottle, emulatorArgv, startCli } from './helpers.js';

interface PointJson {
  point: { kind: string; cacheBytes?: number };
  status: string;
  residency: { held: boolean; toleranceBytes: number; inBandShare: number } | null;
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
 * cache held at half the dataset by the cache cap (an LRU of the files the
 * job closed, src/system/keepers/cache-cap.ts). Needs root for the storage throttle
 * only (blkio/io cgroup); the cap itself needs none.
 */
test('validate holds the page cache at a target share of the dataset and predicts at the cache the job had', async (t) => {
  const throttle = await canThrottle();
  if (throttle) {
    t.skip(`needs storage throttling (root): ${throttle}`);
    return;
  }
  const work = mkdtempSync(join(tmpdir(), 'dsa-e2e-validate-cache-'));
  const data = join(work, 'data');
  // 64 files, as many as the cap's ±10% needs (a file in flight is 3% of the target), of 256 KiB: an epoch reads fast.
  await generateDataset(data, { files: 64, fileBytes: 1 << 18, seed: 7 });
  const profile = join(work, 'p.json');
  const job = emulatorArgv(data, ['--batch-size', '4', '--compute-ms', '10', '--prep-ms', '2', '--workers', '2']);
  const profiled = await startCli(
    [
      'profile',
      '--data',
      data,
      '--out',
      profile,
      '--storage-bw',
      '20MB/s',
      '--single-pass',
      '--precision',
      '10%',
      '--min-iterations',
      '20',
      '--max-iterations',
      '200',
      '--',
      ...job,
    ],
    { cwd: work },
  );
  assert.equal(profiled.exitCode, 0, profiled.all);

  // At least seven measured epochs (448 samples) hold the hit ratio well within its bound; nothing here is held to
  // the measured pace, so --precision 10% (not 5%) decides when the point stops (200 to 320 iterations seen).
  const result = await startCli(
    ['validate', profile, '--cache', '50%', '--epochs', '8', '--precision', '10%', '--no-control', '--json'],
    { cwd: work },
  );
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
  const readings = readFileSync(join(runs, runDir, pointDir, 'residency.jsonl'), 'utf8')
    .trim()
    .split('\n');
  assert.ok(readings.length > 10, "the residency readings are saved beside the job's logs");
  if (point.residentBytes === null || Math.abs(point.residentBytes - target) > 0.1 * target) {
    t.diagnostic(
      `residency readings (every 10th, MiB):\n${readings
        .filter((_, k) => k % 10 === 0)
        .map((line) => mibLine(line))
        .join('\n')}`,
    );
  }
  assert.ok(point.residentBytes !== null, 'residency was read over the measured window');
  // Held at the target within ±10%: not the whole dataset and not nothing.
  assert.ok(
    Math.abs(point.residentBytes - target) <= 0.1 * target,
    `resident ${point.residentBytes} vs target ${target}`,
  );
  assert.equal(point.status, 'measured');
  assert.equal(point.residency?.held, true);
  assert.match(point.note, /mincore/);
  assert.ok(point.measuredSamplesPerSec! > 0 && point.relativeError !== null);
  // Half the dataset cached: some reads hit, some miss, near what LRU over a fresh permutation each epoch predicts
  // (~0.16).
  assert.ok(
    point.measuredHitRatio !== null && point.measuredHitRatio > 0 && point.measuredHitRatio < 0.9,
    'half the dataset cached: some reads hit, some miss',
  );
  // Measured with the bytes per sample of the profile's measured window (2026-11-25; before, s counted the
  // warm-up's samples too and understated every miss ratio), the cap's hit ratio runs above exact LRU's:
  // 0.22-0.28 in five CI runs against 0.16 predicted (docs/whatif.md: Linux hits more often than exact LRU).
  // Within 0.15 either way: a cap that held nothing (0) or the whole dataset still fails.
  assert.ok(
    Math.abs(point.measuredHitRatio - point.predictedHitRatio!) < 0.15,
    `hit ratio ${point.measuredHitRatio} against the predicted ${point.predictedHitRatio}`,
  );
});

function mibLine(line: string): string {
  const reading = JSON.parse(line) as { iterations: number; residentBytes: number };
  return `iteration ${reading.iterations}: ${(reading.residentBytes / 2 ** 20).toFixed(1)}`;
}
