/**
 * gate --against REF -- CANDIDATE: A/B in one run. The two commands run in alternating short profiles of the cold mode
 * (the job's real first-epoch pace) in the order A B B A A B ... (against-rounds.ts), or with --epochs later both at
 * once, handed the machine in turn in slices of the cached mode (against-slices.ts); each round's profile is written to
 * the output folder, the regression judged on the paired rounds (gate/paired.ts) and written beside them as
 * comparison.json.
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import { againstVerdict } from '../gate/against.js';
import { DEFAULT_PAIRS, DEFAULT_SLICED_ROUNDS } from '../gate/against-defaults.js';
import { AGAINST_TEXT } from '../gate/against-text.js';
import { commandWords } from '../gate/command-words.js';
import { DEFAULT_MAX_REGRESSION, optionFlag } from '../gate/config.js';
import { BUDGET_FLAG_KEYS, parseEpochs } from '../gate/options.js';
import { pairedChange } from '../gate/paired.js';
import { chooseRunAs, runAsNote, type RunAs } from '../profile/run-as.js';
import { withPython } from '../profile/python-flag.js';
import { handOver } from '../system/kernel/hand-over.js';
import { GATE_OUTPUT_VERSION } from '../schema/versions.js';
import { commandWithoutSecrets } from '../store/redact.js';
import { writeAtomic } from '../store/write-atomic.js';
import { parseFraction, parsePositiveInt } from '../units.js';
import { runRounds, type AgainstPlan } from './against-rounds.js';
import { runSlicedRounds } from './against-slices.js';
import type { RawGateOptions } from './gate-action.js';
import type { Io } from './io.js';
import { jobNameOf } from './profile-action.js';
import { emitVerdict } from './run-gate.js';

/** gate's flags that --against reads (the rest are refused beside it). */
export interface RawAgainstFlags {
  against?: string;
  data?: string[];
  rounds?: string;
  maxIterations?: string;
  timeout?: string;
  outDir?: string;
  allowConcurrent?: boolean;
  /** Passed on to every round as profile --python. */
  python?: string;
  /** Passed on to every round as profile --as-user. */
  asUser?: string;
}

/** Runs the rounds, judges the paired change, writes comparison.json and prints the verdict; the gate's exit code. */
export async function gateAgainstAction(
  candidate: string[],
  raw: RawGateOptions & RawAgainstFlags,
  io: Io,
): Promise<number> {
  const plan = planAgainst(candidate, raw, io);
  let made: string | undefined;
  try {
    made = mkdirSync(plan.outDir, { recursive: true });
  } catch (error) {
    throw new UserError(AGAINST_TEXT.outDirUnwritable(plan.outDir, (error as Error).message), ExitCode.Environment);
  }
  // A folder that was there keeps its owners: only what this run adds to it is handed over.
  const there = made === undefined ? new Set(readdirSync(plan.outDir)) : null;
  if (plan.runAs) io.stderr(`note: ${runAsNote(plan.runAs, raw.asUser)}\n`);
  try {
    return await judgeRounds(plan, io);
  } finally {
    if (plan.runAs) {
      const added = there ? readdirSync(plan.outDir).filter((name) => !there.has(name)) : [];
      const ours = made ? [made] : added.map((name) => join(plan.outDir, name));
      handBack([...ours, ...(raw.junit ? [resolve(io.cwd, raw.junit)] : [])], plan.runAs, io);
    }
  }
}

/** The rounds run and judged: the verdict printed, comparison.json written; the gate's exit code. */
async function judgeRounds(plan: AgainstPlan, io: Io): Promise<number> {
  const raw = plan.raw;
  const measured = plan.mode === 'cached' ? await runSlicedRounds(plan, io) : await runRounds(plan, io);
  if (measured === 'interrupted') {
    io.stderr(`ds-analyzer: ${AGAINST_TEXT.interrupted(plan.outDir)}\n`);
    return ExitCode.Interrupted;
  }
  const verdict = againstVerdict(plan.jobName, plan.budget, measured.rounds, plan.mode);
  const change = measured.rounds.failure === null ? pairedChange(measured.rounds.rounds) : null;
  // The commands as profiles keep them: a token or a signed URL in an argument never reaches a CI artefact.
  const against = {
    reference: commandWithoutSecrets(plan.argv.reference),
    candidate: commandWithoutSecrets(plan.argv.candidate),
    rounds: measured.files,
    change,
  };
  const options = {
    baselinePath: null,
    json: Boolean(raw.json),
    junitPath: raw.junit ? resolve(io.cwd, raw.junit) : null,
  };
  emitVerdict(verdict, plan.outDir, options, io, { against });
  if (measured.failureTail) io.stderr(`${AGAINST_TEXT.lastLines(measured.failureTail)}\n`);
  const comparison = { schemaVersion: GATE_OUTPUT_VERSION, kind: 'gate-against', ...verdict, against };
  writeAtomic(join(plan.outDir, 'comparison.json'), JSON.stringify(comparison, null, 1) + '\n');
  io.stderr(`${AGAINST_TEXT.written(plan.outDir)}\n`);
  return verdict.exitCode;
}

/** Flags that judge one stored profile: given with --against they are refused, not ignored. */
const ONE_PROFILE_FLAGS = [
  ...['config', 'baseline', 'history', 'noiseHistory', 'chart'],
  // --max-regression is --against's own limit; the other budgets judge one profile.
  ...BUDGET_FLAG_KEYS.filter((key) => key !== 'maxRegression'),
] as const;

function planAgainst(candidate: string[], raw: RawGateOptions & RawAgainstFlags, io: Io): AgainstPlan {
  const others = ONE_PROFILE_FLAGS.filter((key) => raw[key] !== undefined).map(optionFlag);
  if (others.length > 0) throw new UserError(AGAINST_TEXT.withOthers(others.join(', ')), ExitCode.Usage);
  const reference = commandWords(raw.against ?? '');
  if (candidate.length === 0) throw new UserError(AGAINST_TEXT.noCandidate, ExitCode.Usage);
  if (!raw.data || raw.data.length === 0) throw new UserError(AGAINST_TEXT.noData, ExitCode.Usage);
  const mode = raw.epochs !== undefined && parseEpochs(raw.epochs) === 'later' ? 'cached' : 'cold';
  const defaultPairs = mode === 'cached' ? DEFAULT_SLICED_ROUNDS : DEFAULT_PAIRS;
  const pairs = raw.rounds === undefined ? defaultPairs : parsePositiveInt(raw.rounds, '--rounds');
  if (pairs < 2) throw new UserError(AGAINST_TEXT.roundsTooFew(raw.rounds ?? ''), ExitCode.BadValue);
  const limit =
    raw.maxRegression === undefined ? DEFAULT_MAX_REGRESSION : parseFraction(raw.maxRegression, '--max-regression');
  const source = raw.maxRegression === undefined ? 'default with --against' : '--max-regression';
  // The pid too: two gates started in the same second keep their rounds apart.
  const stamp = `${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '')}-${process.pid}`;
  // As profile decides it, before any job runs: --python first, since setpriv is looked up on the PATH it leaves.
  const env = raw.python !== undefined ? withPython(raw.python, io.env, io.cwd) : io.env;
  return {
    argv: { reference, candidate },
    jobName: jobNameOf(candidate),
    pairs,
    iterations: raw.maxIterations === undefined ? null : parsePositiveInt(raw.maxIterations, '--max-iterations'),
    budget: { level: 'error', limit, source },
    mode,
    outDir: resolve(io.cwd, raw.outDir ?? join(raw.profilesDir, `ab-${stamp}`)),
    runAs: chooseRunAs({ flag: raw.asUser, env }),
    raw,
  };
}

/** The rounds' folder and the JUnit file handed to the user the jobs ran as; a failure is a warning, not the verdict. */
function handBack(paths: string[], user: RunAs, io: Io): void {
  try {
    handOver(paths, user, { recursive: true });
  } catch (error) {
    io.stderr(`ds-analyzer: warning: ${error instanceof Error ? error.message : String(error)}\n`);
  }
}
