// The outputs the docs show are real runs' (docs/examples/) rendered by this build: a change to what a
// command prints fails here until `npm run docs:cli` renders the docs again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DOC_EXAMPLES, renderExamples, ROOT } from '../../scripts/doc-examples.js';
import { exampleNames, spliceExamples } from '../../scripts/readme-examples.js';
import { LINE_WIDTH } from '../../src/report/format.js';

const FIX = 'run `npm run docs:cli` to render the docs again';
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const CLI_DOC = readFileSync(join(ROOT, 'docs/cli.md'), 'utf8');
const examples = await renderExamples();

test("the README's example blocks are this build's outputs of the real runs in docs/examples", () => {
  assert.deepEqual(exampleNames(README), ['whatif', 'gate']);
  assert.equal(README, spliceExamples(README, examples), FIX);
});

test("docs/cli.md shows each example in its command's section", () => {
  for (const example of DOC_EXAMPLES) {
    const section = CLI_DOC.slice(CLI_DOC.indexOf(`### \`ds-analyzer ${example.name}\``));
    const block = examples[example.name]!;
    assert.ok(section.slice(0, section.indexOf('\n### ', 1)).includes(block), `${example.name}: ${FIX}`);
  }
});

test('the examples show real figures, and their advice keeps to the line width', () => {
  assert.match(examples.profile!, /^synthetic\s+\d+\.\d ± \d+\.\d/m);
  assert.match(examples.whatif!, /^To remove each stall/m);
  assert.match(examples.gate!, /^rule\s+of\s+level\s+expected\s+actual\s+result$/m);
  const advice = examples.whatif!.slice(examples.whatif!.indexOf('To remove each stall'));
  for (const line of advice.split('\n').slice(0, 12))
    assert.ok(line.length <= LINE_WIDTH || !line.includes(' '), `over ${LINE_WIDTH}: ${line}`);
});
