/**
 * docs/ci.md's A/B workflow (ci-workflow-ab.test.ts) on a pull request that triples the step: far beyond the 5%
 * budget and the noise of a loaded runner (twice the step read +41%, 95% +2.6% to +94%, at a load average of 23 on
 * 2 CPUs: not proven), so this file runs side by side (scripts/test-plan.ts).
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { abGate, abWorkflow, PYTHON, type Scratch, scratchRepository } from './ci-workflow-play.js';

let scratch: Scratch;
before(async () => {
  scratch = await scratchRepository();
});

test('the A/B workflow fails a pull request with a three times longer step, and the rounds come as artifacts', async (t) => {
  if (!existsSync(PYTHON)) return t.skip(`needs ${PYTHON}`);
  scratch.writeTrainPy(8, scratch.mainSnapshot);
  scratch.writeTrainPy(24);
  const slower = await scratch.play('pull_request', abWorkflow);
  const text = slower.outputs.join('\n');
  assert.equal(slower.failed, abGate!.name, text);
  assert.match(text, /regression \(A\/B in one run\) .*FAIL/, 'the A/B gate failed the regression');
  assert.ok(existsSync(join(scratch.repo, 'reports/ab/comparison.json')), 'the comparison is in the artifact');
});
