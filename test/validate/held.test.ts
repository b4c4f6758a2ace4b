import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { renderValidation } from '../../src/report/validate-terminal.js';
import { readProfile } from '../../src/store/profile-store.js';
import { allowedCpus, threadAffinities } from '../../src/system/cgroups/affinity.js';
import { judgeAffinity, judgeResidency } from '../../src/validate/held.js';
import { planValidation } from '../../src/validate/plan.js';
import { errorSummary, pointStatus, type ValidationResult } from '../../src/validate/results.js';
import { fitOrFail } from '../whatif/fit-or-fail.js';

const MiB = 2 ** 20;
const FIXTURE = fileURLToPath(new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url));

test('residency is held when its mean and most readings lie within ±10% of the target', () => {
  const dataset = 1000 * MiB;
  const target = 500 * MiB;
  const held = judgeResidency(
    [480, 500, 520, 505].map((m) => m * MiB),
    target,
    dataset,
  );
  assert.equal(held.held, true);
  assert.equal(held.toleranceBytes, 50 * MiB);
  // The GPU server's 50% point: ~94% of the dataset cached.
  const full = judgeResidency(
    [848, 1298, 1382, 1382].map((m) => m * MiB),
    690.9 * MiB,
    1382 * MiB,
  );
  assert.equal(full.held, false);
  assert.equal(full.inBandShare, 0);
  // Swinging between empty and full, its mean near the target by chance: most readings are out, so not held.
  const swing = judgeResidency(
    [0, 1000, 0, 1000, 500].map((m) => m * MiB),
    target,
    dataset,
  );
  assert.ok(Math.abs(swing.meanBytes! - target) <= swing.toleranceBytes);
  assert.equal(swing.held, false);
  // No reading in the window: not held (nothing shows it was).
  assert.equal(judgeResidency([], target, dataset).held, false);
  // A cap of 0 keeps the files in flight: the band is at least 1% of the dataset; a target above the dataset is the
  // dataset.
  assert.equal(judgeResidency([3 * MiB, 8 * MiB], 0, dataset).held, true);
  assert.equal(judgeResidency([990 * MiB], 2000 * MiB, dataset).held, true);
});

test('affinity is held when every thread of the job stays inside the asked CPUs', () => {
  assert.equal(
    judgeAffinity(
      [
        { pid: 1, tid: 1, cpus: [0] },
        { pid: 2, tid: 3, cpus: [0] },
      ],
      [0],
    ).held,
    true,
  );
  const escaped = judgeAffinity(
    [
      { pid: 1, tid: 1, cpus: [0] },
      { pid: 2, tid: 3, cpus: [0, 1] },
    ],
    [0],
  );
  assert.equal(escaped.held, false);
  assert.equal(escaped.outside, 1);
  assert.match(escaped.example!, /thread 3 of process 2 may run on CPUs 0,1/);
  assert.equal(judgeAffinity([], [0]).held, false, 'no thread seen: nothing shows it applied');
});

test('the threads of a real process tree carry its affinity mask', {
  skip:
    spawnSync('taskset', ['--version']).status !== 0 || allowedCpus().length < 2 ? 'needs taskset and 2 CPUs' : false,
}, async () => {
  const cpu = allowedCpus()[0];
  const pinned = spawn('taskset', ['--cpu-list', String(cpu), process.execPath, '-e', 'setTimeout(() => {}, 5000)']);
  const free = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 5000)']);
  try {
    // Until exec has replaced taskset, the mask may not be set yet: wait for node's threads.
    let threads = threadAffinities(pinned.pid!);
    for (let k = 0; k < 100 && threads.length < 2; k++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      threads = threadAffinities(pinned.pid!);
    }
    assert.equal(judgeAffinity(threads, [cpu]).held, true, JSON.stringify(threads));
    assert.equal(judgeAffinity(threadAffinities(free.pid!), [cpu]).held, false);
  } finally {
    pinned.kill();
    free.kill();
  }
});

function result(
  point: ValidationResult['point'],
  predicted: number,
  measured: number,
  residency: ValidationResult['residency'] = null,
): ValidationResult {
  const rate = measured;
  return {
    point,
    status: pointStatus(rate, residency, null),
    residency,
    affinity: null,
    predictedSamplesPerSec: predicted,
    residentBytes: residency?.meanBytes ?? null,
    predictedHitRatio: null,
    measuredHitRatio: null,
    atMeasuredHitSamplesPerSec: null,
    measuredSamplesPerSec: rate,
    measuredHalfWidth: 1,
    relativeError: (predicted - rate) / rate,
    anchoredSamplesPerSec: null,
    anchoredError: null,
    note: '',
    failureTail: null,
  };
}

test('a cache point not held is marked, left out of the error, and the summary says its size was not tested', () => {
  const dataset = 1382 * MiB;
  const notHeld = judgeResidency(
    [848, 1298, 1382].map((m) => m * MiB),
    690.9 * MiB,
    dataset,
  );
  const held = judgeResidency(
    [1100, 1110, 1095].map((m) => m * MiB),
    1105.4 * MiB,
    dataset,
  );
  const results = [
    result({ kind: 'control' }, 1439.3, 1410.2),
    result({ kind: 'cache', cacheBytes: 690.9 * MiB }, 1439.3, 1229.8, notHeld),
    result({ kind: 'cache', cacheBytes: 1105.4 * MiB }, 1300, 1267.4, held),
  ];
  assert.deepEqual(
    results.map((r) => r.status),
    ['measured', 'not-held', 'measured'],
  );
  const summary = errorSummary(results);
  assert.equal(summary.notHeld, 1);
  assert.ok(
    Math.abs(summary.medianAbsError! - (1300 - 1267.4) / 1267.4) < 1e-12,
    'the 17% of the point not held is left out',
  );
  const text = renderValidation(
    { results, interrupted: false, ...summary, modelCaveats: [], overlapMeasured: true, notRun: [] },
    'p.json',
  );
  assert.match(text, /page cache 690\.9 MiB\s+NOT HELD/);
  assert.match(
    text,
    /page cache 690\.9 MiB: NOT HELD, so this setting was not tested and its error is left out: the dataset's page cache held 1\.1 GiB on average \(848\.0 MiB-1\.3 GiB; 0% of 3 readings in the band\), outside the band 621\.8 MiB-760\.0 MiB/,
  );
  assert.match(text, /median absolute error 2\.6%: within the 10% target/);
  assert.doesNotMatch(text, /NOT within/);
  // Every point not held: nothing is said about the model.
  const none = [results[0], results[1]];
  const noneText = renderValidation(
    { results: none, interrupted: false, ...errorSummary(none), modelCaveats: [], overlapMeasured: true, notRun: [] },
    'p.json',
  );
  assert.match(noneText, /no point tested its setting: nothing to say about the model/);
});

test('the plan estimates each point from the profile: a cache point runs its epochs, the first at the cold rate', () => {
  const profile = readProfile(FIXTURE);
  const model = fitOrFail(profile);
  const files = profile.dataset.files;
  const samplesPerIter = profile.modes.cached!.summary!.samplesPerIter;
  const plan = planValidation(
    profile,
    model,
    [{ kind: 'control' }, { kind: 'cache', cacheBytes: 0 }, { kind: 'cache', cacheBytes: model.datasetBytes }],
    {
      epochs: 3,
      maxIterations: 1000,
      datasetFiles: files,
      samplesPerIter,
    },
  );
  assert.equal(plan[1].iterations, Math.ceil(files / samplesPerIter) * 3);
  // No cache: three cold epochs; the whole dataset cached: one cold epoch, two fast ones.
  assert.ok(plan[2].estimatedSec < plan[1].estimatedSec);
  for (const p of plan) assert.ok(p.estimatedSec > 0 && p.maxSec >= p.estimatedSec, JSON.stringify(p));
});
