/**
 * docs/ci.md's A/B workflow, played in a scratch repository with a train.py (ci-workflow-play.ts): main's train.py
 * and the pull request's run side by side by `gate --against`, its rounds paired (A B B A ...), so a drift of the
 * machine falls on both sides alike. The file still runs alone (scripts/test-plan.ts): a neighbour's burst falls on
 * one round, not both (an unchanged pull request read +45% at a load of 21).
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { doc, PYTHON, type Scratch, scratchRepository, type Workflow, yamlBlockAfter } from './ci-workflow-play.js';

let scratch: Scratch;
before(async () => {
  scratch = await scratchRepository();
});

test("the A/B workflow runs main's train.py and the pull request's side by side: an unchanged one passes, one with a three times longer step fails the gate, and the rounds come as artifacts", async (t) => {
  if (!existsSync(PYTHON)) return t.skip(`needs ${PYTHON}`);
  const ab = parse(yamlBlockAfter(doc, '### A/B in one GitHub Actions job')) as Workflow;
  assert.deepEqual(Object.keys(ab.on), ['pull_request']);
  const abSteps = Object.values(ab.jobs)[0]!.steps;
  const gate = abSteps.find((step) => step.run?.includes('gate --against'));
  assert.match(gate?.run ?? '', /--against 'python main-src\/train\.py'.* -- python train\.py/s);
  scratch.writeTrainPy(8, scratch.mainSnapshot);
  scratch.writeTrainPy(8);
  const same = await scratch.play('pull_request', ab);
  assert.equal(same.failed, null, same.outputs.join('\n'));
  assert.match(same.outputs.join('\n'), /gate PASSED/);
  // Three times the step: far beyond the 5% budget and the noise of a loaded runner (twice read +41%, 95% +2.6% to +94%,
  // at a load average of 23 on 2 CPUs: not proven).
  scratch.writeTrainPy(24);
  const slower = await scratch.play('pull_request', ab);
  const text = slower.outputs.join('\n');
  assert.equal(slower.failed, gate!.name, text);
  assert.match(text, /regression \(A\/B in one run\) .*FAIL/, 'the A/B gate failed the regression');
  assert.ok(existsSync(join(scratch.repo, 'reports/ab/comparison.json')), 'the comparison is in the artifact');
});
