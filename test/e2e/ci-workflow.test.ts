/**
 * docs/ci.md's GitHub Actions workflow, held to its word: the YAML parses, its
 * triggers, permissions and pins are what the text says, and its steps' commands
 * run, in order, in a scratch repository with a train.py: once as a push to main
 * (the profile saved as the baseline) and once as a pull request (gated against
 * it). The `uses:` steps are played by small stand-ins named below (the Actions
 * cache is a folder; the repository's own action.yml runs for real, with npm
 * stood in because this checkout is already built); `pip install` is skipped
 * (no PyPI here). The train.py is a stand-in too: it runs the emulated job,
 * which speaks the job protocol, so the test takes seconds, not a real model's
 * minutes (the PyTorch hook has its own tests).
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { parse } from 'yaml';
import { XMLParser } from 'fast-xml-parser';
import { generateDataset } from '../../src/emulator/generate-dataset.js';
import { emulatorArgv } from './helpers.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PYTHON = '/usr/bin/python3';

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  with?: Record<string, string>;
}
interface Workflow {
  on: { push?: { branches?: string[] }; pull_request?: unknown };
  permissions: Record<string, string>;
  env: Record<string, string>;
  jobs: Record<string, { steps: Step[] }>;
}

/** The first ```yaml block after `heading` in a Markdown file. */
function yamlBlockAfter(markdown: string, heading: string): string {
  const from = markdown.indexOf(heading);
  assert.ok(from >= 0, `docs/ci.md has '${heading}'`);
  const block = /```yaml\n([\s\S]*?)```/.exec(markdown.slice(from));
  assert.ok(block, `a yaml block follows '${heading}'`);
  return block[1]!;
}

const doc = readFileSync(join(ROOT, 'docs/ci.md'), 'utf8');
const workflow = parse(yamlBlockAfter(doc, '## A complete GitHub Actions job')) as Workflow;
const steps = Object.values(workflow.jobs)[0]!.steps;
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

/** A scratch repository: a train.py, its data, and the folders a runner gives a job. */
const work = mkdtempSync(join(tmpdir(), 'dsa-ci-workflow-'));
const repo = join(work, 'repo');
const cacheDir = join(work, 'actions-cache');
const toolsDir = join(work, 'tools');

before(async () => {
  mkdirSync(repo, { recursive: true });
  mkdirSync(cacheDir);
  mkdirSync(toolsDir);
  await generateDataset(join(repo, 'data/train'), { files: 256, fileBytes: 128 << 10, seed: 5 });
  writeTrainPy(8);
  writeFileSync(join(repo, 'requirements.txt'), 'torch\n');
  // setup-python gives the job `python`; npm is stood in: this checkout is built already.
  symlinkSync(PYTHON, join(toolsDir, 'python'));
  writeFileSync(
    join(toolsDir, 'npm'),
    '#!/bin/sh\n[ "$*" = "ci --no-audit --no-fund" ] || { echo "unexpected npm $*" >&2; exit 2; }\necho "$PWD" >> "$NPM_CALLS"\n',
  );
  chmodSync(join(toolsDir, 'npm'), 0o755);
});

/** train.py in `dir` (the repository by default): the emulated job at `computeMs` a step (it ignores --epochs). */
function writeTrainPy(computeMs: number, dir = repo): void {
  const job = emulatorArgv('./data/train', ['--batch-size', '4', '--compute-ms', String(computeMs), '--prep-ms', '1']);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'train.py'),
    `# A stand-in for a training script: the emulated job.\nimport os\nargv = ${JSON.stringify(job)}\nos.execv(argv[0], argv)\n`,
  );
}

/** Replaces ${{ github.X }} by the event's values; any other expression is a test failure. */
function expand(text: string, github: Record<string, string>): string {
  return text.replace(/\$\{\{\s*github\.(\w+)\s*\}\}/g, (_, key: string) => {
    assert.ok(key in github, `the test knows github.${key}`);
    return github[key]!;
  });
}

/**
 * Whether a step runs: the `if` forms the workflow uses (terms joined by &&), nothing else. The scratch
 * repository's pull requests are its own branches, never a fork's.
 */
function shouldRun(step: Step, event: string, failed: boolean, cwd: string): boolean {
  if (step.if === undefined) return !failed;
  const terms = step.if.split(' && ');
  let always = false;
  const holds = terms.every((term) => {
    if (term === 'always()') return (always = true);
    if (term === '!github.event.pull_request.head.repo.fork') return true;
    const file = /^hashFiles\('([^']+)'\) != ''$/.exec(term);
    if (file) return existsSync(join(cwd, file[1]));
    const match = /^github\.event_name == '(\w+)'$/.exec(term);
    assert.ok(match, `the test understands if: ${step.if}`);
    return match[1] === event;
  });
  return holds && (always || !failed);
}

interface RunLog {
  failed: string | null;
  outputs: string[];
  skipped: string[];
}

/** main's files, as a second checkout (`path:`, `ref: github.base_ref`) gets them. */
const mainSnapshot = join(work, 'main-snapshot');

/** Plays the workflow's steps for one event, as a runner would in `repo`. */
async function playWorkflow(event: 'push' | 'pull_request', flow: Workflow = workflow): Promise<RunLog> {
  const steps = Object.values(flow.jobs)[0]!.steps;
  const github = {
    event_name: event,
    sha: event === 'push' ? 'a1b2c3' : 'd4e5f6',
    ref_name: 'main',
    base_ref: event === 'pull_request' ? 'main' : '',
  };
  const runnerTemp = mkdtempSync(join(work, `runner-${event}-`));
  const githubPath = join(runnerTemp, 'github-path');
  writeFileSync(githubPath, '');
  const log: RunLog = { failed: null, outputs: [], skipped: [] };
  const env = (): Record<string, string> => {
    const added = readFileSync(githubPath, 'utf8').split('\n').filter(Boolean).reverse();
    return {
      ...flow.env,
      GITHUB_EVENT_NAME: event,
      GITHUB_STEP_SUMMARY: join(runnerTemp, 'summary.md'),
      GITHUB_PATH: githubPath,
      RUNNER_TEMP: runnerTemp,
      NPM_CALLS: join(runnerTemp, 'npm-calls'),
      // Where the machine's running profiles register, where the test's caller moved it (run-registry.ts).
      ...(process.env.DSA_RUN_REGISTRY ? { DSA_RUN_REGISTRY: process.env.DSA_RUN_REGISTRY } : {}),
      PATH: [...added, toolsDir, dirname(process.execPath), '/usr/sbin', '/usr/bin', '/sbin', '/bin'].join(':'),
    };
  };
  const bash = async (script: string, extraEnv: Record<string, string> = {}) => {
    // The runner's default shell for `run:`.
    const result = await execa('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script], {
      cwd: repo,
      env: { ...env(), ...extraEnv },
      extendEnv: false,
      reject: false,
      all: true,
      timeout: 300_000,
    });
    log.outputs.push(`$ ${script}\n${result.all}`);
    return result.exitCode === 0;
  };
  for (const step of steps) {
    const label = step.name ?? step.uses ?? step.run!;
    if (!shouldRun(step, event, log.failed !== null, repo)) continue;
    let ok = true;
    if (step.run !== undefined) {
      if (step.run.startsWith('pip install')) {
        log.skipped.push(`${label}: no PyPI here`);
        continue;
      }
      ok = await bash(expand(step.run, github));
    } else {
      const action = step.uses!.split('@')[0]!;
      const inputs = Object.fromEntries(
        Object.entries(step.with ?? {}).map(([k, v]) => [k, expand(String(v), github)]),
      );
      if (action === 'actions/checkout' && inputs.path !== undefined) {
        assert.equal(inputs.ref, github.base_ref, 'a second checkout is of the base branch');
        mkdirSync(join(repo, inputs.path), { recursive: true });
        copyFileSync(join(mainSnapshot, 'train.py'), join(repo, inputs.path, 'train.py'));
      } else if (action === 'actions/checkout' || action === 'actions/setup-python') {
        // The scratch repository is the checkout; toolsDir's python is setup-python's.
      } else if (action.endsWith('/ds-analyzer')) {
        const own = parse(readFileSync(join(ROOT, 'action.yml'), 'utf8')) as { runs: { using: string; steps: Step[] } };
        assert.equal(own.runs.using, 'composite');
        for (const inner of own.runs.steps) {
          if (inner.uses)
            assert.match(inner.uses, /^actions\/setup-node@v\d+$/, 'the action only sets up node besides its script');
          else ok &&= await bash(inner.run!, { GITHUB_ACTION_PATH: ROOT });
        }
        assert.deepEqual(
          readFileSync(join(runnerTemp, 'npm-calls'), 'utf8').trim().split('\n'),
          [ROOT.replace(/\/$/, '')],
          'the action ran npm ci in its own checkout',
        );
      } else if (action === 'actions/cache/restore') {
        const prefix = inputs['restore-keys']!;
        const hit = readdirSync(cacheDir)
          .filter((key) => key.startsWith(prefix))
          .sort()
          .at(-1);
        if (hit) {
          mkdirSync(dirname(join(repo, inputs.path!)), { recursive: true });
          copyFileSync(join(cacheDir, hit), join(repo, inputs.path!));
        }
      } else if (action === 'actions/cache/save') {
        copyFileSync(join(repo, inputs.path!), join(cacheDir, inputs.key!));
      } else if (action === 'actions/upload-artifact') {
        for (const path of inputs.path!.split('\n').filter(Boolean))
          assert.ok(existsSync(join(repo, path)), `the artifact's ${path} exists\n${log.outputs.join('\n')}`);
      } else if (action === 'mikepenz/action-junit-report') {
        const xml = new XMLParser({ ignoreAttributes: false }).parse(
          readFileSync(join(repo, inputs.report_paths!), 'utf8'),
        );
        assert.ok(xml.testsuites, 'the JUnit report parses');
      } else {
        assert.fail(`the test has no stand-in for ${step.uses}`);
      }
    }
    if (!ok) log.failed ??= label;
  }
  return log;
}

test("the workflow's steps run in a repository with a train.py: a push to main saves the baseline; a pull request that doubles the step time fails the gate, and its reports still come", async (t) => {
  if (!existsSync(PYTHON)) return t.skip(`needs ${PYTHON}`);
  const push = await playWorkflow('push');
  assert.equal(push.failed, null, push.outputs.join('\n'));
  assert.deepEqual(push.skipped, ['pip install -r requirements.txt: no PyPI here']);
  assert.match(push.outputs.join('\n'), /^no baseline from main yet: budgets only$/m);
  assert.deepEqual(readdirSync(cacheDir), ['ds-analyzer-baseline-main-a1b2c3'], 'main saved its baseline');
  // A red main (its gate failed) keeps its baseline too, where its profile was written.
  const keepers = steps.filter((step) => /main's baseline/.test(step.name ?? '') && step.if?.includes("'push'"));
  assert.equal(keepers.length, 2);
  for (const step of keepers) assert.ok(shouldRun(step, 'push', true, repo), `${step.name} runs on a red main`);

  // The pull request makes each step twice as long: far beyond the 5% budget and this machine's noise.
  writeTrainPy(16);
  const pr = await playWorkflow('pull_request');
  const text = pr.outputs.join('\n');
  assert.equal(pr.failed, 'gate', text);
  assert.doesNotMatch(text, /^no baseline from main yet/m);
  assert.match(text, /regression .* FAIL/, 'the gate failed the regression against main');
  assert.ok(
    existsSync(join(repo, 'reports/compare.txt')),
    'the pull request was compared with main, the gate failed or not',
  );
  assert.ok(existsSync(join(repo, 'reports/run.html')), 'the report was written after the failed gate');
  assert.deepEqual(readdirSync(cacheDir), ['ds-analyzer-baseline-main-a1b2c3'], 'a pull request saves no baseline');
});

test("the A/B workflow runs main's train.py and the pull request's side by side: an unchanged one passes, one with a five times longer step fails the gate, and the rounds come as artifacts", async (t) => {
  if (!existsSync(PYTHON)) return t.skip(`needs ${PYTHON}`);
  const ab = parse(yamlBlockAfter(doc, '### A/B in one GitHub Actions job')) as Workflow;
  assert.deepEqual(Object.keys(ab.on), ['pull_request']);
  const abSteps = Object.values(ab.jobs)[0]!.steps;
  const gate = abSteps.find((step) => step.run?.includes('gate --against'));
  assert.match(gate?.run ?? '', /--against 'python main-src\/train\.py'.* -- python train\.py/s);
  writeTrainPy(8, mainSnapshot);
  writeTrainPy(8);
  const same = await playWorkflow('pull_request', ab);
  assert.equal(same.failed, null, same.outputs.join('\n'));
  assert.match(same.outputs.join('\n'), /gate PASSED/);
  // Five times the step: far beyond the 5% budget and the noise of a loaded runner (twice read +41%, 95% +2.6% to +94%,
  // at a load average of 23 on 2 CPUs: not proven).
  writeTrainPy(40);
  const slower = await playWorkflow('pull_request', ab);
  const text = slower.outputs.join('\n');
  assert.equal(slower.failed, gate!.name, text);
  assert.match(text, /regression \(A\/B in one run\) .*FAIL/, 'the A/B gate failed the regression');
  assert.ok(existsSync(join(repo, 'reports/ab/comparison.json')), 'the comparison is in the artifact');
});
