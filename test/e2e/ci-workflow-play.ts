/**
 * docs/ci.md's GitHub Actions workflows, played step by step in a scratch repository with a train.py, as a runner
 * would: shared by ci-workflow.test.ts (the baseline workflow, a run apart, alone) and ci-workflow-ab.test.ts (the A/B
 * workflow, paired rounds, side by side). The `uses:` steps are played by small stand-ins named below (the Actions
 * cache is a folder; the repository's own action.yml runs for real, with npm stood in because this checkout is already
 * built); `pip install` is skipped (no PyPI here). The train.py is a stand-in too: it runs the emulated job, which
 * speaks the job protocol, so a play takes seconds, not a real model's minutes (the PyTorch hook has its own tests).
 */
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

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const PYTHON = '/usr/bin/python3';

export interface Step {
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  with?: Record<string, string>;
}
export interface Workflow {
  on: { push?: { branches?: string[] }; pull_request?: unknown };
  permissions: Record<string, string>;
  env: Record<string, string>;
  jobs: Record<string, { steps: Step[] }>;
}

/** The first ```yaml block after `heading` in a Markdown file. */
export function yamlBlockAfter(markdown: string, heading: string): string {
  const from = markdown.indexOf(heading);
  assert.ok(from >= 0, `docs/ci.md has '${heading}'`);
  const block = /```yaml\n([\s\S]*?)```/.exec(markdown.slice(from));
  assert.ok(block, `a yaml block follows '${heading}'`);
  return block[1]!;
}

export const doc = readFileSync(join(ROOT, 'docs/ci.md'), 'utf8');
export const workflow = parse(yamlBlockAfter(doc, '## A complete GitHub Actions job')) as Workflow;
export const steps = Object.values(workflow.jobs)[0]!.steps;
/** docs/ci.md's A/B workflow, and its step that runs gate --against. */
export const abWorkflow = parse(yamlBlockAfter(doc, '### A/B in one GitHub Actions job')) as Workflow;
export const abGate = Object.values(abWorkflow.jobs)[0]!.steps.find((step) => step.run?.includes('gate --against'));
/** What a play of the workflow did: the step that failed first, each command's output, the steps skipped. */
export interface RunLog {
  failed: string | null;
  outputs: string[];
  skipped: string[];
}

/** A scratch repository (a train.py, its data, the folders a runner gives a job) and a player of workflows in it. */
export interface Scratch {
  repo: string;
  /** The Actions cache, as a folder of keys. */
  cacheDir: string;
  /** main's files, as a second checkout (`path:`, `ref: github.base_ref`) gets them. */
  mainSnapshot: string;
  /** train.py in `dir` (the repository by default): the emulated job at `computeMs` a step (it ignores --epochs). */
  writeTrainPy(computeMs: number, dir?: string): void;
  /** Plays the workflow's steps for one event, as a runner would in the repository. */
  play(event: 'push' | 'pull_request', flow?: Workflow): Promise<RunLog>;
}

/** Makes the scratch repository: its data, a train.py at 8 ms a step, python and a stand-in npm on PATH. */
export async function scratchRepository(): Promise<Scratch> {
  const work = mkdtempSync(join(tmpdir(), 'dsa-ci-workflow-'));
  const repo = join(work, 'repo');
  const toolsDir = join(work, 'tools');
  const scratch: Scratch = {
    repo,
    cacheDir: join(work, 'actions-cache'),
    mainSnapshot: join(work, 'main-snapshot'),
    writeTrainPy: (computeMs, dir = repo) => writeTrainPy(computeMs, dir),
    play: (event, flow = workflow) => playWorkflow({ ...scratch, work, toolsDir }, event, flow),
  };
  mkdirSync(repo, { recursive: true });
  mkdirSync(scratch.cacheDir);
  mkdirSync(toolsDir);
  await generateDataset(join(repo, 'data/train'), { files: 256, fileBytes: 128 << 10, seed: 5 });
  writeTrainPy(8, repo);
  writeFileSync(join(repo, 'requirements.txt'), 'torch\n');
  // setup-python gives the job `python`; npm is stood in: this checkout is built already.
  symlinkSync(PYTHON, join(toolsDir, 'python'));
  writeFileSync(
    join(toolsDir, 'npm'),
    '#!/bin/sh\n[ "$*" = "ci --no-audit --no-fund" ] || { echo "unexpected npm $*" >&2; exit 2; }\necho "$PWD" >> "$NPM_CALLS"\n',
  );
  chmodSync(join(toolsDir, 'npm'), 0o755);
  return scratch;
}

function writeTrainPy(computeMs: number, dir: string): void {
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
export function shouldRun(step: Step, event: string, failed: boolean, cwd: string): boolean {
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

/** Plays the workflow's steps for one event, as a runner would in `repo`. */
async function playWorkflow(
  { work, repo, toolsDir, cacheDir, mainSnapshot }: Scratch & { work: string; toolsDir: string },
  event: 'push' | 'pull_request',
  flow: Workflow,
): Promise<RunLog> {
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
