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

// The README shows one short output and sends the reader to docs/cli.md for the rest; a block it shows is kept current.
test("the README's example blocks, if any, are this build's outputs, and it points at docs/cli.md for them", () => {
  assert.ok(exampleNames(README).length <= 1, 'the README shows at most one rendered output: the rest live in docs/');
  assert.equal(README, spliceExamples(README, examples), FIX);
  assert.match(README, /\[docs\/cli\.md\]\(docs\/cli\.md\)[^\n]*real output/);
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
