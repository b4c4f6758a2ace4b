/**
 * The rounds of gate --against in turn: each round a short profile of one version in the cold mode, in the order
 * A B B A A B ...; the first round that gives no pace ends them (cli/gate-against-action.ts judges what they left).
 */
import { join } from 'node:path';
import { ExitCode } from '../errors.js';
import type { AgainstRounds } from '../gate/against.js';
import { DEFAULT_ROUND_ITERATIONS } from '../gate/against-defaults.js';
import { AGAINST_TEXT } from '../gate/against-text.js';
import type { Budget } from '../gate/config.js';
import { abbaOrder, type Arm } from '../gate/paired.js';
import { PROFILE_FLAG_DEFAULTS } from '../profile/run-defaults.js';
import { runProfile, type ProfileRunHooks } from '../profile/run-profile.js';
import type { RunAs } from '../profile/run-as.js';
import type { ModeResult } from '../schema/profile.js';
import { formatNumber } from '../units.js';
import type { RawGateOptions } from './gate-action.js';
import type { RawAgainstFlags } from './gate-against-action.js';
import type { Io } from './io.js';
import { parseProfileOptions, type RawProfileOptions } from './profile-action.js';

/** Everything the rounds need, parsed before any job runs. */
export interface AgainstPlan {
  argv: Record<Arm, string[]>;
  jobName: string;
  /** Pairs of rounds in turn (cold), or rounds of both versions at once in slices (cached). */
  pairs: number;
  /** --max-iterations: a round's measured iterations (in turn), or each version's inside its slices; null: not given. */
  iterations: number | null;
  budget: Budget;
  /** The mode each round runs: cold (the first epoch) or cached (epochs 2+, --epochs later). */
  mode: 'cold' | 'cached';
  outDir: string;
  /** The user the jobs run as (--as-user, or SUDO_USER under sudo): the rounds' files are handed to them; null: us. */
  runAs: RunAs | null;
  raw: RawGateOptions & RawAgainstFlags;
}

/** What the rounds left: the paces (or the failure) and each round's profile. */
export interface RoundsRun {
  rounds: AgainstRounds;
  /** The failed round's last lines of output, printed apart from the verdict; null when none failed. */
  failureTail: string | null;
  files: { round: number; arm: Arm; profile: string; msPerSample: number | null }[];
}

/** Runs the rounds in A B B A order; stops at the first round that gives no pace, or at an interrupt. */
export async function runRounds(plan: AgainstPlan, io: Io): Promise<RoundsRun | 'interrupted'> {
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
export function roundFlags(plan: AgainstPlan, out: string): RawProfileOptions {
  const maxIterations = String(plan.iterations ?? DEFAULT_ROUND_ITERATIONS);
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

/**
 * A round's hooks: warnings once over all rounds, notes of the first round only (the rounds' notes differ only in their
 * folders), Ctrl-C to the running round.
 */
export function roundHooks(io: Io, shown: Set<string>, first: boolean): ProfileRunHooks {
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
