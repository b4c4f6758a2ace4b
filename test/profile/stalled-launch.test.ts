/**
 * A launch whose job stops making progress, or whose meter froze, with the
 * job faked in this process (fakeSwitchingJobStarter, hangAtIteration): the
 * watchdog ends the block long before --timeout, and the block is marked
 * stalled, its state not proven, with the cause and its time.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { FakeCacheState } from '../support/fake-cache-state.js';
import { FakeDataSource } from '../support/fake-data-source.js';
import type { CounterReading, FetchMeter } from '../../src/profile/data-sources/fetch-meter.js';
import { fakeSwitchingJobStarter } from '../support/fake-job.js';
import { runLaunch, type LaunchInput } from '../../src/profile/run-launch.js';
import type { Mode } from '../../src/schema/events.js';
import type { Dataset } from '../../src/system/dataset/dataset.js';
import { fakeSamplerStarter } from '../support/fake-sampler.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dsa-stalled-launch-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

const dataset: Dataset = {
  roots: [path.join(root, 'data')],
  files: [{ path: path.join(root, 'data', '0.bin'), bytes: 1000 }],
  bytes: 1000,
  meanFileBytes: 1000,
  fileBytesQuantiles: { p10: 1000, p50: 1000, p90: 1000, max: 1000 },
  device: null,
  fitsInMemory: true,
  memoryBudgetBytes: 2 ** 40,
  skippedEntries: 0,
};

async function launch(
  modes: Mode[],
  name: string,
  options: {
    hangAt: number;
    hangTimeoutSec: number;
    timeoutSec: number;
    dataSource?: LaunchInput['dataSource'];
    dataset?: Dataset;
  },
) {
  const cacheState = new FakeCacheState();
  const job = fakeSwitchingJobStarter({
    waitMs: { synthetic: 0, cached: 4, cold: 10 },
    computeMs: 3,
    inFlight: 3,
    switches: true,
    hangAtIteration: options.hangAt,
  });
  const started = Date.now();
  const outcome = await runLaunch({
    blocks: modes.map((mode, k) => ({
      mode,
      label: `${mode}-${k}`,
      cacheState,
      precision: 0.5,
      minIterations: 25,
      maxIterations: 30,
    })),
    argv: ['train'],
    cwd: root,
    env: {},
    dataset: options.dataset ?? dataset,
    dataSource: options.dataSource ?? new FakeDataSource(),
    modeDir: path.join(root, name),
    timeoutSec: options.timeoutSec,
    firstIterationTimeoutSec: 60,
    hangTimeoutSec: options.hangTimeoutSec,
    stopGraceSec: 5,
    killGraceSec: 1,
    sync: true,
    pollMs: 10,
    wrapArgv: (argv) => argv,
    startJob: job.start,
    startSampler: fakeSamplerStarter([]).start,
    interrupted: () => false,
  });
  return { outcome, sec: (Date.now() - started) / 1000 };
}

test('a job that hangs mid-block: the watchdog ends the block as hung long before --timeout; the block before is kept', async () => {
  // Synthetic ends near iteration 30; the job hangs at 50, inside the cold block.
  const { outcome, sec } = await launch(['synthetic', 'cold'], 'hung', {
    hangAt: 50,
    hangTimeoutSec: 1,
    timeoutSec: 60,
  });
  assert.ok(sec < 20, `the launch took ${sec} s, against a 60 s --timeout per block`);
  assert.deepEqual(
    outcome.results.map((r) => r.mode),
    ['synthetic', 'cold'],
  );
  const [synthetic, cold] = outcome.results;
  assert.equal(synthetic.stalled, undefined);
  assert.equal(synthetic.status, 'ok');
  assert.equal(cold.stopReason, 'timeout');
  assert.equal(cold.stalled?.cause, 'hung', JSON.stringify(cold.stalled));
  assert.match(cold.stalled!.text, /^no iteration for [\d.]+ s from [\d.]+ s into the cold block, \d+x the median/);
  assert.equal(cold.state.proven, false);
  assert.match(cold.state.reason, /the block stalled \(no iteration for/);
});

/** A meter whose bytes rise for the job's first 0.3 s and then never again: an endpoint that froze. */
function frozenSource(): LaunchInput['dataSource'] {
  const meter = (): FetchMeter => {
    const startedAt = Date.now();
    return {
      attach: () => undefined,
      finish: () => {
        const series: CounterReading[] = [];
        for (let t = startedAt; t <= Date.now(); t += 100)
          series.push({ t, bytes: Math.min(t - startedAt, 300) * 1000 });
        return {
          series,
          seriesSource: 'a frozen meter',
          wholeRunBytes: series.at(-1)!.bytes,
          wholeRunSource: 'a frozen meter over the run',
          otherReads: () => null,
          ownCounter: true,
        };
      },
    };
  };
  return { proofLimit: () => null, startMeter: meter };
}

test('a frozen meter while the job waits: the cold block is not proven, and the stall is named with its time', async () => {
  // The job stops getting batches about 0.3 s in, as the meter stops; the watchdog ends the block after 11 s.
  const { outcome } = await launch(['cold'], 'frozen', {
    hangAt: 22,
    hangTimeoutSec: 11,
    timeoutSec: 60,
    dataSource: frozenSource(),
    // Its bytes come over the network, as the source recorded.
    dataset: {
      ...dataset,
      source: {
        kind: 'remote',
        fetchesFrom: 'network',
        url: 'http://frozen',
        endpoint: null,
        jobCache: null,
        netMeter: 'client',
      },
    },
  });
  const cold = outcome.results[0];
  assert.equal(cold.stalled?.cause, 'no-bytes', JSON.stringify(cold.stalled));
  assert.ok(cold.stalled!.atSec < 2, `${cold.stalled!.atSec}`);
  assert.match(cold.stalled!.text, /^the endpoint sent nothing from [\d.]+ s into the cold block, for 1\d s until/);
  assert.equal(cold.state.proven, false, 'the bytes it fetched before it froze would otherwise prove the cold state');
  assert.match(cold.state.reason, /the block stalled/);
});
