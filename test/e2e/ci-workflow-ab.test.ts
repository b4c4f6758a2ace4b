/**
 * docs/ci.md's A/B workflow, played in a scratch repository with a train.py (ci-workflow-play.ts): main's train.py
 * and the pull request's run side by side by `gate --against`, its rounds paired (A B B A ...), so a drift of the
 * machine falls on both sides alike. This file, an unchanged pull request, runs alone (scripts/test-plan.ts): a
 * neighbour's burst falls on one round, not both (an unchanged pull request read +45% at a load of 21). A pull
 * request that triples the step fails wherever it runs: ci-workflow-ab-fail.test.ts, side by side.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { abGate, abWorkflow, PYTHON, type Scratch, scratchRepository } from './ci-workflow-play.js';

let scratch: Scratch;
before(async () => {
  scratch = await scratchRepository();
});

test("the A/B workflow runs main's train.py and the pull request's side by side: an unchanged one passes", async (t) => {
  if (!existsSync(PYTHON)) return t.skip(`needs ${PYTHON}`);
  assert.deepEqual(Object.keys(abWorkflow.on), ['pull_request']);
  assert.match(abGate?.run ?? '', /--against 'python main-src\/train\.py'.* -- python train\.py/s);
  scratch.writeTrainPy(8, scratch.mainSnapshot);
  scratch.writeTrainPy(8);
  const same = await scratch.play('pull_request', abWorkflow);
  assert.equal(same.failed, null, same.outputs.join('\n'));
  assert.match(same.outputs.join('\n'), /gate PASSED/);
});
