/**
 * docs/ci.md's GitHub Actions workflow, held to its word: the YAML parses, its triggers, permissions and pins are
 * what the text says, and its steps' commands run, in order, in a scratch repository with a train.py
 * (ci-workflow-play.ts): once as a push to main (the profile saved as the baseline) and once as a pull request (gated
 * against it). The pull request's profile is held against main's, a run apart: a timing, so this file runs alone
 * (scripts/test-plan.ts). The A/B workflow, its rounds paired in one run: ci-workflow-ab.test.ts, side by side.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import {
  doc,
  PYTHON,
  ROOT,
  type Scratch,
  scratchRepository,
  shouldRun,
  type Step,
  steps,
  workflow,
  yamlBlockAfter,
} from './ci-workflow-play.js';

const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

test('the workflow bootstraps on a push to main, gates pull requests, has the permission its JUnit action needs, and pins every action by a tag', () => {
  assert.deepEqual(workflow.on.push?.branches, ['main']);
  assert.ok('pull_request' in workflow.on);
  assert.equal(workflow.permissions.checks, 'write');
  assert.equal(workflow.permissions.contents, 'read');
  for (const step of steps.filter((s) => s.uses))
    assert.match(step.uses!, /@v\d+(\.\d+)*$/, `${step.uses} is pinned by a tag`);
  const own = steps.find((s) => s.uses?.includes('/ds-analyzer@'));
  assert.equal(own?.uses, `OWNER/ds-analyzer@v${version}`, "ds-analyzer's pin is this version's tag");
  const selfHosted = parse(yamlBlockAfter(doc, '### On a self-hosted GPU runner')) as {
    'runs-on': string[];
    steps: Step[];
  };
  assert.ok(selfHosted['runs-on'].includes('self-hosted') && selfHosted['runs-on'].includes('gpu'));
  assert.match(selfHosted.steps.map((s) => s.run ?? '').join('\n'), /nvidia-smi/);
});

let scratch: Scratch;
before(async () => {
  scratch = await scratchRepository();
});

test("the workflow's steps run in a repository with a train.py: a push to main saves the baseline; a pull request that doubles the step time fails the gate, and its reports still come", async (t) => {
  if (!existsSync(PYTHON)) return t.skip(`needs ${PYTHON}`);
  const push = await scratch.play('push');
  assert.equal(push.failed, null, push.outputs.join('\n'));
  assert.deepEqual(push.skipped, ['pip install -r requirements.txt: no PyPI here']);
  assert.match(push.outputs.join('\n'), /^no baseline from main yet: budgets only$/m);
  assert.deepEqual(readdirSync(scratch.cacheDir), ['ds-analyzer-baseline-main-a1b2c3'], 'main saved its baseline');
  // A red main (its gate failed) keeps its baseline too, where its profile was written.
  const keepers = steps.filter((step) => /main's baseline/.test(step.name ?? '') && step.if?.includes("'push'"));
  assert.equal(keepers.length, 2);
  for (const step of keepers) assert.ok(shouldRun(step, 'push', true, scratch.repo), `${step.name} runs on a red main`);

  // The pull request makes each step twice as long: far beyond the 5% budget and this machine's noise.
  scratch.writeTrainPy(16);
  const pr = await scratch.play('pull_request');
  const text = pr.outputs.join('\n');
  assert.equal(pr.failed, 'gate', text);
  assert.doesNotMatch(text, /^no baseline from main yet/m);
  assert.match(text, /regression .* FAIL/, 'the gate failed the regression against main');
  assert.ok(
    existsSync(join(scratch.repo, 'reports/compare.txt')),
    'the pull request was compared with main, the gate failed or not',
  );
  assert.ok(existsSync(join(scratch.repo, 'reports/run.html')), 'the report was written after the failed gate');
  assert.deepEqual(
    readdirSync(scratch.cacheDir),
    ['ds-analyzer-baseline-main-a1b2c3'],
    'a pull request saves no baseline',
  );
});
