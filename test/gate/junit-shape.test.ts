import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { run } from '../../src/cli/main.js';
import { GateOutputSchema, type GateOutput } from '../../src/schema/gate-output.js';
import { fakeIo } from '../cli/fake-io.js';
import { fixturePath } from './fixtures.js';

// The JUnit XML's shape as docs/json-output.md documents it, checked against
// the JSON verdict of the same run: one suite, one case per rule, and a case
// for a failed job.

interface Property {
  name: string;
  value: string;
}
interface TestCase {
  classname: string;
  name: string;
  properties?: { property: Property[] };
  failure?: { message: string; type: string };
  'system-out'?: string;
}
interface Counts {
  tests: string;
  failures: string;
  errors: string;
  skipped: string;
}
interface JunitDoc {
  testsuites: Counts & {
    testsuite: (Counts & { name: string; properties: { property: Property[] }; testcase: TestCase[] })[];
  };
}

const work = mkdtempSync(join(tmpdir(), 'dsa-junit-shape-'));
after(() => rmSync(work, { recursive: true, force: true }));
const warnConfig = join(work, 'warn.json');
writeFileSync(
  warnConfig,
  JSON.stringify({ budgets: { fetchStall: { level: 'warn', max: '20%' }, prepStall: { max: '30%' } } }),
);

const CASES: [string, string[]][] = [
  [
    'every rule, some failing',
    [
      fixturePath('fetch-bound'),
      '--max-fetch-stall',
      '20%',
      '--max-prep-stall',
      '30%',
      '--max-total-stall',
      '40%',
      '--min-throughput',
      '300',
      '--baseline',
      fixturePath('pass'),
    ],
  ],
  ['warn levels', [fixturePath('fetch-bound'), '--config', warnConfig]],
  ['a failed job', [fixturePath('job-failed'), '--max-fetch-stall', '20%']],
  ['a hostile job name', [fixturePath('hostile'), '--max-fetch-stall', '20%']],
];

/** Runs gate with --json and --junit together: the verdict and its XML. */
async function gateBoth(args: string[], name: string): Promise<{ verdict: GateOutput; doc: JunitDoc }> {
  const xmlPath = join(work, `${name}.xml`);
  const io = fakeIo(work, {});
  await run(['gate', ...args, '--json', '--junit', xmlPath], io);
  const xml = readFileSync(xmlPath, 'utf8');
  assert.equal(XMLValidator.validate(xml), true, 'well-formed XML');
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '',
    isArray: (tag) => ['testsuite', 'testcase', 'property'].includes(tag),
  });
  return { verdict: GateOutputSchema.parse(JSON.parse(io.out)), doc: parser.parse(xml) as JunitDoc };
}

const props = (list: Property[] | undefined): Record<string, string> =>
  Object.fromEntries((list ?? []).map((p) => [p.name, p.value]));

for (const [what, args] of CASES) {
  test(`gate's JUnit XML has the documented shape: ${what}`, async () => {
    const { verdict, doc } = await gateBoth(args, what.replace(/\W+/g, '-'));
    const suites = doc.testsuites.testsuite;
    assert.equal(suites.length, 1, 'one testsuite');
    const [suite] = suites;
    assert.equal(suite.name, `ds-analyzer gate: ${verdict.jobName}`);
    assert.deepEqual(props(suite.properties.property), { profile: verdict.profile });

    const cases = suite.testcase;
    assert.equal(
      cases.length,
      verdict.rules.length + (verdict.jobFailure ? 1 : 0),
      'one testcase per rule, and one for a failed job',
    );
    for (const [k, rule] of verdict.rules.entries()) {
      const testCase = cases[k];
      assert.equal(testCase.classname, 'ds-analyzer.gate');
      assert.equal(testCase.name, `${rule.name} ${rule.expected}`);
      assert.deepEqual(props(testCase.properties?.property), {
        level: rule.level,
        actual: rule.actual,
        source: rule.source,
      });
      const detail = `${rule.name}: expected ${rule.expected}, actual ${rule.actual}${rule.note ? `; ${rule.note}` : ''}`;
      if (rule.result === 'fail') {
        assert.deepEqual(testCase.failure, { message: detail, type: 'budget' });
        assert.equal(testCase['system-out'], undefined);
      } else {
        assert.equal(testCase.failure, undefined, 'a warning passes: JUnit has no warning state');
        assert.equal(testCase['system-out'], rule.result === 'warn' ? `WARNING (level warn): ${detail}` : detail);
      }
    }
    if (verdict.jobFailure) {
      const jobCase = cases[cases.length - 1];
      assert.equal(jobCase.name, 'the training job ran to the end');
      assert.deepEqual(jobCase.failure, { message: verdict.jobFailure, type: 'job' });
    }

    const failures = verdict.failed + (verdict.jobFailure ? 1 : 0);
    for (const counts of [doc.testsuites, suite]) {
      assert.deepEqual(
        { tests: counts.tests, failures: counts.failures, errors: counts.errors, skipped: counts.skipped },
        { tests: String(cases.length), failures: String(failures), errors: '0', skipped: '0' },
      );
    }
  });
}
