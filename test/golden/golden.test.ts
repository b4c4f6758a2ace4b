import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { run } from '../../src/cli/main.js';
import { fakeIo } from '../cli/fake-io.js';

// Golden outputs of the commands that only read a profile (whatif, gate,
// compare, report) on the stored profiles under test/fixtures. A refactor
// must leave them unchanged; a change that is meant names itself in its
// commit and rewrites them with DSA_UPDATE_GOLDEN=1 npm test.

const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/profiles/', import.meta.url));
const GOLDEN = fileURLToPath(new URL('../../../test/fixtures/golden/', import.meta.url));
const UPDATE = process.env.DSA_UPDATE_GOLDEN === '1';

const work = mkdtempSync(join(tmpdir(), 'dsa-golden-'));
after(() => rmSync(work, { recursive: true, force: true }));

const gate = (name: string): string => join(FIXTURES, 'gate', `${name}.json`);
const quick = join(FIXTURES, 'emulated-quick.json');

interface Case {
  name: string;
  args: string[];
  /** Files the command writes under the work folder whose text is part of the output. */
  files?: string[];
}

const CASES: Case[] = [
  { name: 'whatif-quick', args: ['whatif', quick] },
  { name: 'whatif-quick-json', args: ['whatif', quick, '--json'] },
  {
    name: 'whatif-quick-knobs',
    args: ['whatif', quick, '--cache', '50%', '--cpus', '4', '--storage-bw', '50MB/s', '--gpus', '2', '--epochs', '10'],
  },
  {
    name: 'whatif-quick-minio-json',
    args: ['whatif', quick, '--cache', '0', '--cache-policy', 'minio', '--gpu-speedup', '2', '--json'],
  },
  { name: 'whatif-fetch-bound', args: ['whatif', gate('fetch-bound')] },
  { name: 'whatif-prep-bound', args: ['whatif', gate('prep-bound')] },
  { name: 'whatif-unproven-cold', args: ['whatif', gate('unproven-cold')] },
  { name: 'gate-pass', args: ['gate', gate('pass'), '--max-fetch-stall', '20%', '--max-prep-stall', '30%'] },
  {
    name: 'gate-fetch-bound-json',
    args: ['gate', gate('fetch-bound'), '--max-fetch-stall', '10%', '--min-throughput', '100', '--json'],
  },
  {
    name: 'gate-regressed',
    args: ['gate', gate('regressed'), '--baseline', gate('pass'), '--max-regression', '5%', '--junit', 'gate.xml'],
    files: ['gate.xml'],
  },
  {
    name: 'gate-regressed-noisy',
    args: ['gate', gate('regressed-noisy'), '--baseline', gate('pass'), '--max-regression', '5%', '--json'],
  },
  { name: 'gate-unproven-cold', args: ['gate', gate('unproven-cold'), '--max-total-stall', '25%'] },
  { name: 'gate-job-failed', args: ['gate', gate('job-failed'), '--max-fetch-stall', '20%'] },
  { name: 'compare-pass-regressed', args: ['compare', gate('pass'), gate('regressed')] },
  { name: 'compare-pass-rerun-json', args: ['compare', gate('pass'), gate('pass-rerun'), '--json'] },
  { name: 'report-quick', args: ['report', quick, '--out-dir', 'reports'], files: ['reports/emulated-quick.md'] },
  { name: 'report-hostile', args: ['report', gate('hostile'), '--out-dir', 'reports'], files: ['reports/hostile.md'] },
];

/** The command's whole output with the run's folders replaced, so that it is the same on every machine. */
function normalize(text: string, cwd: string): string {
  return text.split(cwd).join('<cwd>').split(FIXTURES).join('<fixtures>/').split(tmpdir()).join('<tmp>');
}

for (const testCase of CASES) {
  test(`golden: ds-analyzer ${testCase.args.map((a) => a.replace(FIXTURES, '')).join(' ')}`, async () => {
    const cwd = join(work, testCase.name);
    mkdirSync(cwd, { recursive: true });
    const io = fakeIo(cwd, { PATH: process.env.PATH });
    const exitCode = await run(testCase.args, io);
    const parts = [`exit code: ${exitCode}`, '--- stdout', io.out, '--- stderr', io.err];
    for (const file of testCase.files ?? []) {
      const path = join(cwd, file);
      parts.push(`--- ${file}`, existsSync(path) ? readFileSync(path, 'utf8') : '(not written)');
    }
    const actual = normalize(parts.join('\n'), cwd);
    const goldenPath = join(GOLDEN, `${testCase.name}.txt`);
    if (UPDATE || !existsSync(goldenPath)) {
      if (!UPDATE) assert.fail(`no golden output ${goldenPath}: record it with DSA_UPDATE_GOLDEN=1`);
      mkdirSync(GOLDEN, { recursive: true });
      writeFileSync(goldenPath, actual);
      return;
    }
    assert.equal(
      actual,
      readFileSync(goldenPath, 'utf8'),
      `output differs from ${goldenPath} (rewrite with DSA_UPDATE_GOLDEN=1 if the change is meant)`,
    );
  });
}

test('golden: every stored output has its case', () => {
  const names = new Set(CASES.map((c) => `${c.name}.txt`));
  const stray = existsSync(GOLDEN) ? readdirSync(GOLDEN).filter((name) => !names.has(name)) : [];
  assert.deepEqual(stray, [], 'golden files without a case');
});
