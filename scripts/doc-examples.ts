/**
 * The real outputs the docs show (docs/cli.md, a section a command; a README block `<!-- example: NAME -->`), rendered by
 * this build from the artefacts of real runs kept in docs/examples/: a profile of examples/pytorch/train.py,
 * doctor's findings and a validate run of that profile (docs/examples/README.md says when and where).
 * `npm run docs:examples -- --rerun` runs them again; `npm run docs:cli` renders the blocks; the docs
 * tests render them again and fail when a block and this build's output have drifted apart.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Io } from '../src/cli/io.js';
import { run } from '../src/cli/main.js';
import { readProfile } from '../src/store/profile-store.js';
import { renderSummary } from '../src/report/terminal.js';
import { renderDoctor } from '../src/report/doctor-terminal.js';
import { renderValidation } from '../src/report/validate-terminal.js';
import type { Diagnosis } from '../src/system/probes/diagnose.js';
import type { ValidationReport } from '../src/validate/results.js';

/** The repository's root, from dist/scripts/. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The artefacts' folder, relative to the root (the commands shown run from the root). */
export const EXAMPLES = 'docs/examples';
export const PROFILE = `${EXAMPLES}/train-profile.json`;
export const DOCTOR = `${EXAMPLES}/doctor.json`;
export const VALIDATION = `${EXAMPLES}/validate.json`;

/** The command that made the profile, as a user types it in the folder the run used (the rerun's cwd). */
export const PROFILE_COMMAND =
  'ds-analyzer profile --data imagefolder/train --data imagefolder/val --max-iterations 120 -- python3 train.py -a squeezenet1_1 -b 32 -j 2 --lr 0.01 --image-size 32 --epochs 30 imagefolder';
export const VALIDATE_ARGS = ['--cpus', '1', '--max-iterations', '150'];

export interface DocExample {
  /** The command's name: its docs/cli.md section, and the README block `<!-- example: NAME -->`. */
  name: string;
  /** The command line shown. */
  shown: string;
  /** Lines kept from the top of the output; the rest is cut, saying how many lines were left out. */
  keep: number;
  /** Where the shown part ends, if before `keep` lines: the first line that matches. */
  until?: RegExp;
  /** The output, as this build prints it. */
  render(): Promise<string>;
}

/** Runs the CLI in-process from the repository's root and returns what it printed on stdout. */
async function cli(argv: string[]): Promise<string> {
  let out = '';
  const io: Io = {
    stdout: (t) => (out += t),
    stderr: () => undefined,
    env: { ...process.env, NO_COLOR: '1' },
    cwd: ROOT,
    isTTY: false,
    onSignal: () => () => undefined,
  };
  await run(argv, io);
  return out;
}

function json<T>(path: string): T {
  return JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as T;
}

export const DOC_EXAMPLES: DocExample[] = [
  {
    name: 'profile',
    shown: PROFILE_COMMAND,
    keep: 40,
    render: async () => renderSummary(readProfile(join(ROOT, PROFILE)), 'profiles/train-profile.json'),
  },
  {
    name: 'whatif',
    shown: `ds-analyzer whatif ${PROFILE} --cpus 4 --cache 50%`,
    keep: 60,
    until: /^Cache sweep/,
    render: () => cli(['whatif', PROFILE, '--cpus', '4', '--cache', '50%']),
  },
  {
    name: 'gate',
    shown: `ds-analyzer gate ${PROFILE} --max-fetch-stall 20% --max-prep-stall 30%`,
    keep: 20,
    render: () => cli(['gate', PROFILE, '--max-fetch-stall', '20%', '--max-prep-stall', '30%']),
  },
  {
    name: 'validate',
    shown: `ds-analyzer validate ${PROFILE} ${VALIDATE_ARGS.join(' ')}`,
    keep: 30,
    render: async () => {
      const {
        schemaVersion: _v,
        kind: _k,
        profile: _p,
        ...report
      } = json<ValidationReport & { schemaVersion: number; kind: string; profile: string }>(VALIDATION);
      return renderValidation(report as ValidationReport, PROFILE);
    },
  },
  {
    name: 'export',
    shown: `ds-analyzer export ${PROFILE} --format csv --out train.csv && head -4 train.csv`,
    keep: 6,
    render: async () => {
      const dir = mkdtempSync(join(tmpdir(), 'dsa-doc-export-'));
      try {
        const printed = await cli(['export', PROFILE, '--format', 'csv', '--out', join(dir, 'train.csv')]);
        const head = readFileSync(join(dir, 'train.csv'), 'utf8').split('\n').slice(0, 4).join('\n');
        return `${printed.replace(/export: \S+/, 'export: train.csv')}${head}`;
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  },
  { name: 'doctor', shown: 'ds-analyzer doctor', keep: 30, render: async () => renderDoctor(json<Diagnosis>(DOCTOR)) },
];

/** A block's text: the command, then the output's first `keep` lines, and a line saying what was cut. */
export async function renderExample(example: DocExample): Promise<string> {
  const lines = (await example.render()).replaceAll(ROOT, '').trimEnd().split('\n');
  const end = example.until ? lines.findIndex((line) => example.until!.test(line)) : -1;
  const keep = Math.min(example.keep, end >= 0 ? end : lines.length);
  const cut = lines.length - keep;
  const kept = cut > 1 ? [...lines.slice(0, keep), `[... ${cut} more lines]`] : lines;
  return [`$ ${example.shown}`, ...kept].join('\n');
}

/** Every example rendered, by name. */
export async function renderExamples(): Promise<Record<string, string>> {
  const rendered: Record<string, string> = {};
  for (const example of DOC_EXAMPLES) rendered[example.name] = await renderExample(example);
  return rendered;
}
