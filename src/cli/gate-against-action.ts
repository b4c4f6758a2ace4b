/**
 * gate --against REF -- CANDIDATE: A/B in one run. The two commands run in alternating short profiles of the cold mode
 * (the job's real first-epoch pace; with --epochs later the cached mode, the dataset in the page cache, as epochs 2+
 * run), in the order A B B A A B ..., each round a profile of its own in the output folder; the regression is judged on
 * the paired rounds (gate/paired.ts) and written beside them as comparison.json.
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import { againstVerdict, type AgainstRounds } from '../gate/against.js';
import { DEFAULT_PAIRS, DEFAULT_ROUND_ITERATIONS } from '../gate/against-defaults.js';
import { AGAINST_TEXT } from '../gate/against-text.js';
import { commandWords } from '../gate/command-words.js';
import { DEFAULT_MAX_REGRESSION, optionFlag, type Budget } from '../gate/config.js';
import { BUDGET_FLAG_KEYS, parseEpochs } from '../gate/options.js';
import { abbaOrder, pairedChange, type Arm } from '../gate/paired.js';
import { runProfile, type ProfileRunHooks } from '../profile/run-profile.js';
import type { ModeResult } from '../schema/profile.js';
import { PROFILE_FLAG_DEFAULTS } from '../profile/run-defaults.js';
import { chooseRunAs, runAsNote, type RunAs } from '../profile/run-as.js';
import { withPython } from '../profile/python-flag.js';
import { handOver } from '../system/kernel/hand-over.js';
import { GATE_OUTPUT_VERSION } from '../schema/versions.js';
import { commandWithoutSecrets } from '../store/redact.js';
import { writeAtomic } from '../store/write-atomic.js';
import { formatNumber, parseFraction, parsePositiveInt } from '../units.js';
import type { RawGateOptions } from './gate-action.js';
import type { Io } from './io.js';
import { jobNameOf, parseProfileOptions, type RawProfileOptions } from './profile-action.js';
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

/** Everything the rounds need, parsed before any job runs. */
interface AgainstPlan {
  argv: Record<Arm, string[]>;
  jobName: string;
  pairs: number;
  budget: Budget;
  /** The mode each round runs: cold (the first epoch) or cached (epochs 2+, --epochs later). */
  mode: 'cold' | 'cached';
  outDir: string;
  /** The user the jobs run as (--as-user, or SUDO_USER under sudo): the rounds' files are handed to them; null: us. */
  runAs: RunAs | null;
  raw: RawGateOptions & RawAgainstFlags;
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
  const measured = await runRounds(plan, io);
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
  const pairs = raw.rounds === undefined ? DEFAULT_PAIRS : parsePositiveInt(raw.rounds, '--rounds');
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
    budget: { level: 'error', limit, source },
    mode: raw.epochs === undefined ? 'cold' : parseEpochs(raw.epochs) === 'later' ? 'cached' : 'cold',
    outDir: resolve(io.cwd, raw.outDir ?? join(raw.profilesDir, `ab-${stamp}`)),
    runAs: chooseRunAs({ flag: raw.asUser, env }),
    raw,
  };
}

/** What the rounds left: the paces (or the failure) and each round's profile. */
interface RoundsRun {
  rounds: AgainstRounds;
  /** The failed round's last lines of output, printed apart from the verdict; null when none failed. */
  failureTail: string | null;
  files: { round: number; arm: Arm; profile: string; msPerSample: number | null }[];
}

/** Runs the rounds in A B B A order; stops at the first round that gives no pace, or at an interrupt. */
async function runRounds(plan: AgainstPlan, io: Io): Promise<RoundsRun | 'interrupted'> {
  const order = abbaOrder(plan.pairs);
  const run: RoundsRun = { rounds: { rounds: [], unproven: 0, failure: null }, failureTail: null, files: [] };
  const shown = new Set<string>();
  for (const [k, arm] of order.entries()) {
    const index = k + 1;
    const out = join(plan.outDir, `round-${String(index).padStart(2, '0')}-${arm}.json`);
    // The verdict reads the pace alone: no storage probe after the round.
    const input = { ...parseProfileOptions(plan.argv[arm], roundFlags(plan, out), io), storageProbe: false };
    const outcome = await runProfile(input, roundHooks(io, shown, index === 1));
    if (outcome.exitCode === ExitCode.Interrupted) return 'interrupted';
    const measuredMode = outcome.profile.modes[plan.mode];
    const summary = measuredMode?.summary;
    const msPerSample = summary && summary.samplesPerIter > 0 ? summary.iterMs.mean / summary.samplesPerIter : null;
    run.files.push({ round: index, arm, profile: outcome.path, msPerSample });
    if (outcome.exitCode !== ExitCode.Ok || msPerSample === null || !Number.isFinite(msPerSample)) {
      run.rounds.failure = AGAINST_TEXT.roundFailed(index, arm, noPaceReason(measuredMode, plan.mode), outcome.path);
      run.failureTail = outcome.failureTail;
      return run;
    }
    if (!measuredMode!.state.proven) run.rounds.unproven += 1;
    run.rounds.rounds.push({ arm, msPerSample });
    const pace = formatNumber(msPerSample, 3);
    io.stderr(`${AGAINST_TEXT.roundDone(index, order.length, arm, pace, summary!.measuredIterations)}\n`);
  }
  return run;
}

/** Why a round's mode gave no pace: it did not run, it failed, or its job ended before any iteration past the warm-up. */
export function noPaceReason(mode: ModeResult | undefined, name: string): string {
  if (!mode) return `the ${name} mode did not run`;
  if (mode.status === 'ok' && !mode.summary)
    return AGAINST_TEXT.roundTooShort(Math.max(0, ...mode.ranks.map((r) => r.iterations.length)));
  return `${mode.status} (${mode.stopReason})`;
}

/** A round's profile flags: one mode alone (cold, or cached with --epochs later), once, to its iteration budget. */
function roundFlags(plan: AgainstPlan, out: string): RawProfileOptions {
  const maxIterations = plan.raw.maxIterations ?? DEFAULT_ROUND_ITERATIONS;
  return {
    ...PROFILE_FLAG_DEFAULTS,
    data: plan.raw.data,
    modes: plan.mode,
    singlePass: true,
    // A round runs its whole budget: stopping early at a precision would give the rounds unequal lengths.
    precision: '0.1%',
    minIterations: maxIterations,
    maxIterations,
    timeout: plan.raw.timeout ?? PROFILE_FLAG_DEFAULTS.timeout,
    sync: true,
    nvidiaSmi: 'nvidia-smi',
    out,
    name: plan.jobName,
    allowConcurrent: plan.raw.allowConcurrent,
    python: plan.raw.python,
    asUser: plan.raw.asUser,
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

/**
 * A round's hooks: warnings once over all rounds, notes of the first round only (the rounds' notes differ only in their
 * folders), Ctrl-C to the running round.
 */
function roundHooks(io: Io, shown: Set<string>, first: boolean): ProfileRunHooks {
  const once = (line: string) => {
    if (shown.has(line)) return;
    shown.add(line);
    io.stderr(`${line}\n`);
  };
  return {
    onNote: (message) => (first ? once(`note: ${message}`) : undefined),
    onWarning: (message) => once(`warning: ${message}`),
    onSignal: (handler) => io.onSignal(handler),
  };
}
