import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { run } from '../../src/cli/main.js';
import { ExitCode } from '../../src/errors.js';
import { fakeIo } from '../cli/fake-io.js';
import { fixturePath } from './fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'dsa-gate-'));
const BUDGETS = [
  '--max-fetch-stall',
  '20%',
  '--max-prep-stall',
  '30%',
  '--max-total-stall',
  '40%',
  '--min-throughput',
  '300',
];

async function gate(args: string[], env: NodeJS.ProcessEnv = {}) {
  const io = fakeIo(dir, env);
  const code = await run(['gate', ...args], io);
  assert.doesNotMatch(io.err, /\bat .+:\d+:\d+\)?$/m, 'no stack trace');
  return { code, out: io.out, err: io.err };
}

test('gate passes a compute-bound profile with exit 0 and a one-screen verdict', async () => {
  const { code, out } = await gate([fixturePath('pass'), ...BUDGETS]);
  assert.equal(code, ExitCode.Ok);
  assert.match(out, /^gate PASSED: pass /);
  assert.match(out, /^fetch stall\s+first epoch\s+error\s+≤ 20% of iteration\s+4\.3% ± 0\.\d%\s+pass$/m);
  assert.match(out, /^4 of 4 rules passed: exit 0$/m);
  const lines = out.trimEnd().split('\n');
  assert.ok(lines.length <= 24, `fits one screen: ${lines.length} lines`);
});

test('gate fails a fetch-bound profile with exit 1 and lists expected, actual and result per rule', async () => {
  const { code, out } = await gate([fixturePath('fetch-bound'), ...BUDGETS]);
  assert.equal(code, ExitCode.GateFailed);
  assert.match(out, /^gate FAILED/);
  assert.match(out, /^fetch stall\s+first epoch\s+error\s+≤ 20% of iteration\s+80% ± 0\.\d%\s+FAIL$/m);
  assert.match(out, /^prep stall\s+first epoch\s+error\s+≤ 30% of iteration\s+1\.8% ± 0\.\d%\s+pass$/m);
  assert.match(out, /^throughput\s+first epoch\s+error\s+≥ 300\.0 samples\/s\s+69\.6 ± 0\.\d samples\/s\s+FAIL$/m);
  assert.match(out, /^3 of 4 rules failed: exit 1$/m);
});

test('options may follow the profile argument', async () => {
  const { code } = await gate([fixturePath('pass'), '--max-fetch-stall', '20%']);
  assert.equal(code, ExitCode.Ok);
});

test('a regression within noise passes and the output says so; beyond noise fails', async () => {
  const within = await gate([
    fixturePath('regressed-noisy'),
    '--baseline',
    fixturePath('pass'),
    '--max-regression',
    '5%',
  ]);
  assert.equal(within.code, ExitCode.Ok);
  assert.match(within.out, /regression: .*above the 5% budget but within the noise of both profiles/);
  const beyond = await gate([fixturePath('regressed'), '--baseline', fixturePath('pass'), '--max-regression', '5%']);
  assert.equal(beyond.code, ExitCode.GateFailed);
  assert.match(beyond.out, /^regression\s+first epoch\s+error\s+≤ \+5% iteration time\s+\+2\d% ± \d(\.\d)?%\s+FAIL$/m);
});

test('an unproven cold mode fails the cold rules with the reason', async () => {
  const { code, out } = await gate([fixturePath('unproven-cold'), ...BUDGETS]);
  assert.equal(code, ExitCode.GateFailed);
  assert.match(out, /^fetch stall\s+first epoch\s+error\s+≤ 20% of iteration\s+—\s+FAIL$/m);
  assert.match(out, /fetch stall: the cold mode is unproven: only 40\.0% of consumed bytes/);
  assert.match(out, /^prep stall .*pass$/m);
});

test('a config file with warn levels: the gate warns and passes', async () => {
  const config = join(dir, 'warn.json');
  writeFileSync(
    config,
    JSON.stringify({ budgets: { fetchStall: { level: 'warn', max: '20%' }, prepStall: { max: '30%' } } }),
  );
  const { code, out } = await gate([fixturePath('fetch-bound'), '--config', config]);
  assert.equal(code, ExitCode.Ok);
  assert.match(out, /^fetch stall\s+first epoch\s+warn\s+.*WARN$/m);
  assert.match(out, /1 of 2 rules passed, 1 warning: exit 0/);
});

test('a profile recording a failed job exits 5', async () => {
  const { code, err } = await gate([fixturePath('job-failed'), '--max-prep-stall', '30%']);
  assert.equal(code, ExitCode.JobFailed);
  assert.match(err, /the job failed in cold mode/);
});

const errors: [string, string[], ExitCode, RegExp][] = [
  ['no budget', [fixturePath('pass')], ExitCode.Usage, /no budget to check: pass one such as --max-fetch-stall 20%/],
  [
    'a regression budget without a baseline',
    [fixturePath('pass'), '--max-regression', '5%'],
    ExitCode.Usage,
    /needs a baseline profile/,
  ],
  [
    'a bad share',
    [fixturePath('pass'), '--max-fetch-stall', 'lots'],
    ExitCode.BadValue,
    /--max-fetch-stall must be a fraction/,
  ],
  [
    'a missing profile',
    [join(dir, 'nope.json'), '--max-fetch-stall', '20%'],
    ExitCode.MissingInput,
    /nope\.json' does not exist/,
  ],
  [
    'a missing config',
    [fixturePath('pass'), '--config', join(dir, 'nope-config.json')],
    ExitCode.MissingInput,
    /gate config .* does not exist/,
  ],
  [
    'a wrong schemaVersion',
    [fixturePath('wrong-schema-version'), '--max-fetch-stall', '20%'],
    ExitCode.CorruptFile,
    /schemaVersion 99, this ds-analyzer reads 1/,
  ],
  [
    'missing fields',
    [fixturePath('missing-fields'), '--max-fetch-stall', '20%'],
    ExitCode.CorruptFile,
    /malformed at 'host'/,
  ],
  [
    'a huge number',
    [fixturePath('huge-number'), '--max-fetch-stall', '20%'],
    ExitCode.CorruptFile,
    /malformed at 'modes\.synthetic/,
  ],
  [
    'a file that is not JSON',
    [fixturePath('not-json'), '--max-fetch-stall', '20%'],
    ExitCode.CorruptFile,
    /is not valid JSON/,
  ],
  [
    'a corrupt baseline',
    [fixturePath('pass'), '--baseline', fixturePath('wrong-schema-version')],
    ExitCode.CorruptFile,
    /schemaVersion 99/,
  ],
];
for (const [what, args, code, pattern] of errors) {
  test(`gate with ${what}: one line, exit ${code}`, async () => {
    const result = await gate(args);
    assert.equal(result.code, code, result.err);
    const lines = result.err
      .trimEnd()
      .split('\n')
      .filter((l) => !l.startsWith('('));
    assert.equal(lines.length, 1, result.err);
    assert.match(lines[0], pattern);
  });
}

test('a config with an unknown key exits 3 naming the key', async () => {
  const config = join(dir, 'bad.json');
  writeFileSync(config, JSON.stringify({ budgets: { fetchStall: { max: 0.2, levle: 'warn' } } }));
  const { code, err } = await gate([fixturePath('pass'), '--config', config]);
  assert.equal(code, ExitCode.BadValue);
  assert.match(err, /gate config '.*bad\.json': unknown key 'levle' at budgets\.fetchStall/);
  writeFileSync(config, '{ "budgets": ');
  assert.equal((await gate([fixturePath('pass'), '--config', config])).code, ExitCode.BadValue);
});

test('--junit writes JUnit XML that parses: one test case per rule, failures marked', async () => {
  const file = join(dir, 'out', 'gate.xml');
  const { code } = await gate([fixturePath('fetch-bound'), ...BUDGETS, '--junit', file]);
  assert.equal(code, ExitCode.GateFailed);
  const xml = readFileSync(file, 'utf8');
  assert.equal(XMLValidator.validate(xml), true);
  const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(xml);
  const suite = doc.testsuites.testsuite;
  assert.equal(suite.tests, '4');
  assert.equal(suite.failures, '3');
  const cases = suite.testcase as { name: string; failure?: { message: string } }[];
  assert.deepEqual(
    cases.map((c) => c.name.split(' ').slice(0, 2).join(' ')),
    ['fetch stall', 'prep stall', 'total stall', 'throughput ≥'],
  );
  assert.match(cases[0].failure!.message, /fetch stall: expected ≤ 20% of iteration, actual 80%/);
  assert.equal(cases[1].failure, undefined);
});

test('the JUnit XML of a hostile profile is still valid XML', async () => {
  const file = join(dir, 'hostile.xml');
  await gate([fixturePath('hostile'), '--max-fetch-stall', '20%', '--junit', file]);
  const xml = readFileSync(file, 'utf8');
  assert.equal(XMLValidator.validate(xml), true);
  const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(xml);
  assert.match(doc.testsuites.testsuite.name, /<\/script><script>window\.pwned=1/);
});

test('the Markdown verdict is appended to GITHUB_STEP_SUMMARY, with the job name escaped', async () => {
  const summary = join(dir, 'step-summary.md');
  writeFileSync(summary, '# earlier step\n');
  const env = { GITHUB_STEP_SUMMARY: summary };
  await gate([fixturePath('fetch-bound'), ...BUDGETS], env);
  await gate([fixturePath('hostile'), '--max-fetch-stall', '20%'], env);
  const md = readFileSync(summary, 'utf8');
  assert.match(md, /^# earlier step\n/, 'appended, not overwritten');
  assert.match(md, /### ds-analyzer gate ❌ failed: fetch-bound/);
  assert.match(
    md,
    /^\| fetch stall \| first epoch \| error \| ≤ 20% of iteration \| 80% ± 0\.\d% \| ❌ \*\*fail\*\* \|$/m,
  );
  assert.match(md, /^\| prep stall \| first epoch \| error \| .* \| ✅ pass \|$/m);
  assert.doesNotMatch(md, /<script|<img|<\/script/i);
  assert.match(md, /&lt;\/script&gt;&lt;script&gt;window.pwned=1/);
  assert.ok(!existsSync(join(dir, 'GITHUB_STEP_SUMMARY')));
});

test('--json prints the verdict alone on stdout', async () => {
  const { out } = await gate([fixturePath('fetch-bound'), ...BUDGETS, '--json']);
  const verdict = JSON.parse(out);
  assert.equal(verdict.exitCode, 1);
  assert.equal(verdict.rules.length, 4);
});

test('gate, compare and report have --help with examples and exit codes', async () => {
  for (const command of ['gate', 'compare', 'report']) {
    const io = fakeIo(dir);
    assert.equal(await run([command, '--help'], io), ExitCode.Ok);
    assert.match(io.out, /Examples:/, command);
    assert.match(io.out, /Exit codes/, command);
  }
  const io = fakeIo(dir);
  await run(['gate', '--help'], io);
  assert.match(io.out, /Exit codes:\n\s+0\s+every budget at level error held/);
  // One table, not the generic one after the gate's own.
  assert.equal(io.out.match(/Exit codes/g)!.length, 1);
});

test('--epochs later judges epochs 2+: a fetch-bound first epoch whose dataset the page cache holds passes its fetch budget, and says why', async () => {
  const first = await gate([fixturePath('fetch-bound'), '--max-fetch-stall', '20%']);
  assert.equal(first.code, ExitCode.GateFailed);
  // An older profile without laterEpochs gets them from the what-if's model.
  const later = await gate([
    fixturePath('fetch-bound'),
    '--epochs',
    'later',
    '--max-fetch-stall',
    '20%',
    '--max-time-to-first-batch',
    '1h',
  ]);
  assert.equal(
    later.code,
    ExitCode.GateFailed,
    'this old profile has no first batch: that rule fails, whatever --epochs says',
  );
  assert.match(later.out, /^fetch stall\s+epochs 2\+\s+error\s+≤ 20% of iteration\s+0% ± 0%\s+pass$/m);
  assert.match(later.out, /^time to first batch\s+first epoch\s+/m, 'the first batch is always the first epoch');
  assert.match(later.out, /fetch stall: epochs 2\+ measured: the cached pace \(the page cache holds the dataset\)/);
  const json = await gate([fixturePath('fetch-bound'), '--epochs', 'later', '--max-fetch-stall', '20%', '--json']);
  assert.equal(json.code, ExitCode.Ok);
  assert.equal(JSON.parse(json.out).rules[0].judges, 'later-epochs');
});

test("a config file's epochs is honoured, and --epochs overrides it; a wrong value is a one-line error", async () => {
  const config = join(dir, 'later.json');
  writeFileSync(config, JSON.stringify({ epochs: 'later', budgets: { fetchStall: { max: '20%' } } }));
  assert.equal((await gate([fixturePath('fetch-bound'), '--config', config])).code, ExitCode.Ok);
  assert.equal(
    (await gate([fixturePath('fetch-bound'), '--config', config, '--epochs', 'first'])).code,
    ExitCode.GateFailed,
  );
  const bad = await gate([fixturePath('fetch-bound'), '--epochs', 'all', '--max-fetch-stall', '20%']);
  assert.equal(bad.code, ExitCode.BadValue);
  assert.match(bad.err, /--epochs 'all' is not one of first, later/);
  writeFileSync(config, JSON.stringify({ epochs: 'second', budgets: { fetchStall: { max: '20%' } } }));
  assert.equal((await gate([fixturePath('fetch-bound'), '--config', config])).code, ExitCode.BadValue);
});
