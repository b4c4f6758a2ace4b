import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../src/cli/main.js';
import { compareProfiles } from '../../src/compare/diff.js';
import { changeBetween } from '../../src/compare/noise.js';
import { ExitCode } from '../../src/errors.js';
import { fakeIo } from '../cli/fake-io.js';
import { fixture, fixturePath } from '../gate/fixtures.js';

test('changeBetween: beyond noise only when the interval of the difference excludes 0', () => {
  const a = { mean: 100, halfWidth: 3, proven: true };
  assert.equal(
    changeBetween(a, { mean: 105, halfWidth: 4, proven: true }).noise,
    'within',
    '5 < hypot(3,4) = 5 is not beyond',
  );
  assert.equal(changeBetween(a, { mean: 105.1, halfWidth: 4, proven: true }).noise, 'beyond');
  assert.equal(changeBetween(a, { mean: 94, halfWidth: 4, proven: true }).noise, 'beyond');
  assert.equal(changeBetween(a, { mean: 110, halfWidth: null, proven: true }).noise, 'unknown');
  const c = changeBetween(a, { mean: 110, halfWidth: 4, proven: false });
  assert.equal(c.relative, 0.1);
  assert.equal(c.relativeHalfWidth, 0.05);
  assert.equal(c.proven, false);
});

test('compare: a regression is worse beyond noise; a re-run of the same job is mostly within noise', () => {
  const byName = (cmp: ReturnType<typeof compareProfiles>, group: string, name: string) =>
    cmp.figures.find((f) => f.group === group && f.name === name)!;
  const regressed = compareProfiles(fixture('pass'), fixture('regressed'));
  assert.equal(byName(regressed, 'split', 'iteration time').verdict, 'worse');
  assert.equal(byName(regressed, 'cold', 'throughput').verdict, 'worse');
  assert.equal(byName(regressed, 'split', 'fetch stall').verdict, 'worse');
  const improved = compareProfiles(fixture('regressed'), fixture('pass'));
  assert.equal(byName(improved, 'split', 'iteration time').verdict, 'better');
  const noisy = compareProfiles(fixture('pass'), fixture('regressed-noisy'));
  assert.equal(byName(noisy, 'cached', 'iteration time').verdict, 'same');
});

test('compare CLI prints each figure with A, B, change and verdict', async () => {
  const io = fakeIo(mkdtempSync(join(tmpdir(), 'dsa-compare-')));
  const code = await run(['compare', fixturePath('pass'), fixturePath('regressed')], io);
  assert.equal(code, ExitCode.Ok, io.err);
  assert.match(io.out, /^split: compute\s+ms\s+/m);
  assert.match(
    io.out,
    /^cold: iteration time\s+ms\s+11\.50 ± 0\.0\d\s+14\.37 ± 0\.0\d\s+\+2\.87 \(\+25%\)\s+worse \(beyond noise\)$/m,
  );
  assert.match(io.out, /figure\(s\) worse and \d+ better beyond the noise of both profiles/);
});

test('compare: a corrupt profile is a one-line error with exit 7', async () => {
  const io = fakeIo(tmpdir());
  assert.equal(
    await run(['compare', fixturePath('pass'), fixturePath('wrong-schema-version')], io),
    ExitCode.CorruptFile,
  );
  assert.match(io.err, /^ds-analyzer: profile '.*wrong-schema-version\.json' has schemaVersion 99/);
});

test('compare says how two profiles differ as jobs, data, settings or machine, and nothing for one job', () => {
  const a = fixture('pass');
  assert.deepEqual(compareProfiles(a, fixture('pass')).differences, []);
  const b = structuredClone(a);
  b.command = [...a.command, '--lr', '0.2'];
  b.dataset = { ...a.dataset, files: a.dataset.files * 2 };
  b.host = { ...a.host, cpus: a.host.cpus + 6 };
  const differences = compareProfiles(a, b).differences;
  assert.equal(differences.length, 3, differences.join('\n'));
  assert.match(differences[0], /^command: \(nothing\) → --lr 0\.2$/);
  assert.match(differences[1], /^data: \d+ files, .+ → \d+ files/);
  assert.match(differences[2], new RegExp(`^machine CPUs: ${a.host.cpus} × .+ → ${a.host.cpus + 6} × `));
  const changedValue = structuredClone(b);
  changedValue.command = b.command.map((arg) => (arg === '0.2' ? '0.3' : arg));
  assert.equal(compareProfiles(b, changedValue).differences[0], 'command: --lr 0.2 → --lr 0.3');
});

test('compare prints the differences as a note above its table', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dsa-compare-differ-'));
  const a = fixture('pass');
  const b = structuredClone(a);
  b.command = [...a.command, '--image-size', '256'];
  const pathB = join(dir, 'b.json');
  writeFileSync(pathB, JSON.stringify(b));
  const io = fakeIo(dir);
  const code = await run(['compare', fixturePath('pass'), pathB], io);
  assert.equal(code, ExitCode.Ok, io.err);
  assert.match(io.out, /note: A and B are not the same job.*\n {2}command: \(nothing\) → --image-size 256\n/);
});
