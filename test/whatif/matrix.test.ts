import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { readProfile } from '../../src/store/profile-store.js';
import { whatifMatrix, DEFAULT_MATRIX_CACHE_SHARES } from '../../src/whatif/matrix.js';
import { baseScenario, predict } from '../../src/whatif/model.js';
import { MatrixOutputSchema } from '../../src/schema/matrix-output.js';
import { matrixOutput } from '../../src/schema/output-headers.js';
import { renderMatrix } from '../../src/report/matrix-terminal.js';
import { fitOrFail } from './fit-or-fail.js';

const FIXTURE = fileURLToPath(new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url));

test('the matrix has a cell per CPU count and cache size, each the prediction at that setting, and parses under its schema', () => {
  const profile = readProfile(FIXTURE);
  const model = fitOrFail(profile);
  const matrix = whatifMatrix(model, { path: FIXTURE, jobName: profile.jobName }, {});
  assert.deepEqual(
    matrix.cacheBytes,
    DEFAULT_MATRIX_CACHE_SHARES.map((share) => Math.round(share * model.datasetBytes)),
  );
  assert.ok(matrix.cpus.includes(model.profiledCpus) && matrix.cpus[0] === 1);
  assert.equal(matrix.cells.length, matrix.cpus.length * matrix.cacheBytes.length);
  const base = baseScenario(model);
  for (const cell of matrix.cells) {
    const expected = predict(model, { ...base, cpus: cell.cpus, cacheBytes: cell.cacheBytes });
    assert.equal(cell.samplesPerSec, expected.samplesPerSec);
    assert.equal(cell.bottleneck, expected.bottleneck);
    assert.ok(
      cell.samplesPerSecRange.low <= cell.samplesPerSec + 1e-9 &&
        cell.samplesPerSec <= cell.samplesPerSecRange.high + 1e-9,
    );
  }
  // Cache sizes ascend row by row; with the rest fixed, more cache never predicts less.
  for (const cpus of matrix.cpus) {
    const column = matrix.cells.filter((c) => c.cpus === cpus).map((c) => c.samplesPerSec);
    for (let k = 1; k < column.length; k++)
      assert.ok(column[k] >= column[k - 1] - 1e-9, `${cpus} CPUs: ${column.join(', ')}`);
  }
  // The profiled setting, the whole dataset cached, is the one cell the profile measured.
  assert.deepEqual(
    matrix.cells.filter((c) => c.measured).map((c) => [c.cpus, c.cacheFraction]),
    [[model.profiledCpus, 1]],
  );
  const parsed = MatrixOutputSchema.strict().safeParse(matrixOutput(matrix));
  assert.ok(parsed.success, parsed.success ? '' : parsed.error.message);
});

test('axes as asked, the other settings from the query; validate is offered three cells off the profiled axes, none above the profiled CPUs', () => {
  const profile = readProfile(FIXTURE);
  const model = fitOrFail(profile);
  const matrix = whatifMatrix(
    model,
    { path: '/p/run.json', jobName: 'job' },
    { cpus: [4, 1, 2, 2], cacheBytes: [model.datasetBytes, 0] },
  );
  assert.deepEqual(matrix.cpus, [1, 2, 4]);
  assert.deepEqual(matrix.cacheBytes, [0, model.datasetBytes]);
  const match = /^ds-analyzer validate \/p\/run\.json --cells (.+)$/.exec(matrix.validateCommand ?? '');
  assert.ok(match, matrix.validateCommand ?? 'no command');
  const cells = match[1].split(',').map((cell) => cell.split('@').map(Number));
  assert.ok(cells.length >= 1 && cells.length <= 3);
  for (const [cpus, cache] of cells) {
    assert.ok(cpus <= model.profiledCpus && cache <= model.datasetBytes, `${cpus}@${cache}`);
    assert.ok(!matrix.cells.find((c) => c.cpus === cpus && c.cacheBytes === cache)!.measured);
  }
  // Another accelerator: nothing in the grid was measured, and validate cannot run it.
  const faster = whatifMatrix(model, { path: '/p/run.json', jobName: 'job' }, {}, { gpuSpeedup: 2 });
  assert.equal(faster.scenario.gpuSpeedup, 2);
  assert.ok(faster.cells.every((c) => !c.measured));
  assert.equal(faster.validateCommand, null);
  const text = renderMatrix(matrix);
  assert.match(text, /cache \\ CPUs\s+1\s+2\s+4/);
  assert.match(text, /\*/, 'the measured cell is marked');
});
