/**
 * The gate's rules as pure functions of a profile (and a baseline): each returns what was expected, what was measured
 * and whether it held. A rule resting on a mode whose cache state was not proven fails with that mode's reason: an
 * unproven number cannot pass a budget.
 */
import { combinedHalfWidth } from '../analysis/estimate.js';
import { changeBetween, dividedBy, rateEstimate } from '../compare/noise.js';
import { ExitCode } from '../errors.js';
import type { Mode } from '../schema/events.js';
import type { GateOutputBody } from '../schema/gate-output.js';
import type { Estimate, LaterEpochs, Profile } from '../schema/profile.js';
import { formatNumber } from '../units.js';
import type { Budget, Budgets, GateEpochs } from './config.js';
import { RULE_IDS, type RuleId } from './rule-ids.js';
import { widenedInterval, type BetweenRuns } from './between-runs.js';
import { BETWEEN_RUNS_TEXT } from './between-runs-text.js';

type OutcomeOutput = GateOutputBody['rules'][number];
/** Outcome of one rule (the contract: schema/gate-output.ts); every outcome says which epochs it judged. */
export type RuleOutcome = OutcomeOutput & Required<Pick<OutcomeOutput, 'judges'>>;
/** The gate's verdict over all rules. */
export type GateVerdict = Omit<GateOutputBody, 'profile' | 'baseline' | 'rules'> & { rules: RuleOutcome[] };

const NAMES: Record<RuleId, string> = {
  fetchStall: 'fetch stall',
  prepStall: 'prep stall',
  totalStall: 'total stall',
  throughput: 'throughput',
  regression: 'regression',
  checkpointStall: 'checkpoint stall',
  timeToFirstBatch: 'time to first batch',
};

/** Modes each rule's figure rests on (DESIGN.md, the differential method). */
const NEEDS: Record<RuleId, Mode[]> = {
  fetchStall: ['cached', 'cold'],
  prepStall: ['synthetic', 'cached'],
  totalStall: ['synthetic', 'cached', 'cold'],
  throughput: ['cold'],
  regression: ['cold'],
  checkpointStall: ['cold'],
  timeToFirstBatch: ['cold'],
};

/**
 * Which epochs a rule's figure is of: a share of the iteration or a pace is of the epochs asked; the first batch is the
 * first epoch's.
 */
function judgedEpochs(id: RuleId, epochs: GateEpochs): RuleOutcome['judges'] {
  return id !== 'timeToFirstBatch' && epochs === 'later' ? 'later-epochs' : 'first-epoch';
}

/** Evaluates every budget against `profile` (and `baseline` for the regression rule), the pace rules on `epochs`. */
export function evaluateGate(
  profile: Profile,
  budgets: Budgets,
  baseline: Profile | null = null,
  epochs: GateEpochs = 'first',
  betweenRuns: BetweenRuns | null = null,
): GateVerdict {
  const rules: RuleOutcome[] = [];
  for (const id of RULE_IDS) {
    const budget = budgets[id];
    if (!budget) continue;
    rules.push(evaluateRule(id, budget, profile, baseline, judgedEpochs(id, epochs), betweenRuns));
  }
  const failedMode = Object.values(profile.modes).find((m) => m?.status === 'failed');
  // A stalled mode (analysis/stalls.ts) is no measurement to judge, as a failed one is not.
  const stalledMode = Object.values(profile.modes).find((m) => m?.stalled);
  const jobFailure = stalledMode?.stalled
    ? `the ${stalledMode.mode} mode stalled: ${stalledMode.stalled.text}`
    : failedMode
      ? `the job failed in ${failedMode.mode} mode (${failedMode.stopReason}${failedMode.jobExitCode !== null ? `, exit code ${failedMode.jobExitCode}` : failedMode.jobSignal ? `, ${failedMode.jobSignal}` : ''})`
      : null;
  const failed = rules.filter((r) => r.result === 'fail').length;
  const warned = rules.filter((r) => r.result === 'warn').length;
  const exitCode = jobFailure ? ExitCode.JobFailed : failed > 0 ? ExitCode.GateFailed : ExitCode.Ok;
  return { jobName: profile.jobName, rules, failed, warned, jobFailure, exitCode };
}

type Judge = (held: boolean, actual: string, value: number | null, note: string | null) => RuleOutcome;

/** A rule's outcome once its figure is known. */
function judgeOf(id: RuleId, budget: Budget, judges: RuleOutcome['judges']): Judge {
  const base = { id, name: NAMES[id], level: budget.level, limit: budget.limit, source: budget.source, judges };
  const expected = expectedText(id, budget.limit);
  return (held, actual, value, note) => ({
    ...base,
    expected,
    actual,
    value,
    note,
    result: held ? 'pass' : budget.level === 'error' ? 'fail' : 'warn',
  });
}

/**
 * A rule's outcome. A pace rule on epochs 2+ (--epochs later) takes its figure from the profile's laterEpochs, measured
 * (the cached pace, the dataset held) or predicted (the what-if's steady state at the machine's cache, without an
 * interval), and its notes end with which.
 */
function evaluateRule(
  id: RuleId,
  budget: Budget,
  profile: Profile,
  baseline: Profile | null,
  judges: RuleOutcome['judges'],
  betweenRuns: BetweenRuns | null,
): RuleOutcome {
  const judge = judgeOf(id, budget, judges);
  const later = judges === 'later-epochs';
  // The later epochs rest on every mode: the prep stall, the cached pace, and the real pace they are taken from.
  const needs = later ? LATER_NEEDS : NEEDS[id];
  const missing = unusableModes(profile, needs) ?? (later && !profile.laterEpochs ? NO_LATER_EPOCHS : null);
  if (missing) return judge(false, '—', null, missing);
  const basis = later ? laterBasisNote(profile.laterEpochs!) : null;
  if (id === 'regression') {
    if (!baseline) return judge(false, '—', null, 'no baseline profile given');
    const baseMissing = unusableModes(baseline, needs) ?? (later && !baseline.laterEpochs ? NO_LATER_EPOCHS : null);
    if (baseMissing) return judge(false, '—', null, `baseline: ${baseMissing}`);
    const pace = (p: Profile) => (later ? p.laterEpochs!.iterMs : p.modes.cold!.summary!.iterMs);
    return regression({ profile, baseline, limit: budget.limit, pace, basis, betweenRuns }, judge);
  }
  const analysis = profile.analysis!;
  // The cold mode is there for every rule that reads it (NEEDS).
  const cold = () => profile.modes.cold!.summary!;
  const iterMs = later ? profile.laterEpochs!.iterMs : analysis.iterMs!;
  const judgeAgainst = (held: boolean, actual: string, estimate: Estimate) =>
    judge(held, actual, estimate.mean, joinNotes(marginNote(estimate, budget.limit), basis));
  if (id === 'throughput') {
    // Epochs 2+: the same batches at the later pace, the cold rate scaled by the ratio of the two paces.
    const rate = later
      ? rateEstimate(cold().samplesPerSec * (cold().iterMs.mean / iterMs.mean), iterMs)
      : rateEstimate(cold().samplesPerSec, cold().iterMs);
    return judgeAgainst(rate.mean >= budget.limit, `${plusMinus(rate, formatNumber)} samples/s`, rate);
  }
  if (id === 'timeToFirstBatch') return timeToFirstBatch(profile, budget.limit, judge);
  if (id === 'checkpointStall' && !analysis.checkpointStall) {
    const iterations = cold().measuredIterations + cold().warmupIterations;
    const seen = later
      ? 'no checkpoint save seen in the cold mode'
      : `no checkpoint save seen in the cold mode's ${iterations} iterations (a job that saves less often needs a ` +
        'longer run: --max-iterations)';
    return judge(true, '0%', 0, seen);
  }
  const stall =
    id === 'checkpointStall'
      ? analysis.checkpointStall!.ms
      : later
        ? laterStall(id, profile.laterEpochs!)
        : stallEstimate(id, analysis.prepStallMs, analysis.fetchStallMs, profile);
  if (!stall) return judge(false, '—', null, later ? NO_LATER_PREP_STALL : NO_STALL);
  const share = dividedBy(stall, iterMs.mean);
  return judgeAgainst(share.mean <= budget.limit, plusMinus(share, pct), share);
}

const NO_STALL = 'the analysis holds no figure for this stall: re-run ds-analyzer profile';
const NO_LATER_PREP_STALL =
  'the profile holds no prep stall for epochs 2+: re-run ds-analyzer profile with all three modes';

/** The stall of epochs 2+ a rule is about (the checkpoint stall is the same in every epoch). */
function laterStall(id: RuleId, later: LaterEpochs): Estimate | null {
  if (id === 'fetchStall') return later.fetchStallMs;
  if (id === 'prepStall') return later.prepStallMs;
  return later.prepStallMs && sumOf(later.prepStallMs, later.fetchStallMs);
}

const LATER_NEEDS: Mode[] = ['synthetic', 'cached', 'cold'];

const NO_LATER_EPOCHS =
  'the profile holds no figures for epochs 2+ (an older profile, or a mode missing): re-run ds-analyzer profile, ' +
  'or judge the first epoch (--epochs first)';

/** Where the later epochs' figure comes from, for the rule's note. */
function laterBasisNote(later: LaterEpochs): string {
  return later.basis === 'measured'
    ? 'epochs 2+ measured: the cached pace (the page cache holds the dataset)'
    : `epochs 2+ predicted: the what-if's steady state at ${(later.hitRatio * 100).toFixed(0)}% hits (${later.policy ?? 'exact LRU'}), no interval`;
}

function sumOf(a: Estimate, b: Estimate): Estimate {
  return {
    mean: a.mean + b.mean,
    halfWidth: combinedHalfWidth(a.halfWidth, b.halfWidth),
    proven: a.proven && b.proven,
  };
}

function joinNotes(...notes: (string | null)[]): string | null {
  const kept = notes.filter((n): n is string => n !== null && n !== '');
  return kept.length ? kept.join('; ') : null;
}

/**
 * Seconds from the training loader's iter() to its first batch in the cold mode (the job reported its epoch start),
 * else the loader's first wait the iterations show (its iter() not timed: a lower bound, said so).
 */
function timeToFirstBatch(profile: Profile, limit: number, judge: Judge): RuleOutcome {
  const cold = profile.modes.cold!;
  const fromEpochs =
    profile.analysis?.boundaryStall?.mode === 'cold' ? profile.analysis.boundaryStall.firstBatchMs : null;
  const sec = fromEpochs !== null ? fromEpochs / 1000 : (cold.firstBatch?.firstWaitSec ?? null);
  if (sec === null) return judge(false, '—', null, 'the cold mode recorded no first batch: re-run ds-analyzer profile');
  const note =
    fromEpochs !== null
      ? null
      : "the loader's first wait only (iter(loader) was not timed: an older hook or another framework), a lower bound";
  return judge(sec <= limit, `${formatNumber(sec, 2)} s`, sec, note);
}

/** The stall in ms the rule is about; total = T_cold - T_synthetic, whose CI comes from those two modes. */
function stallEstimate(id: RuleId, prep: Estimate | null, fetch: Estimate | null, profile: Profile): Estimate | null {
  if (id === 'prepStall') return prep;
  if (id === 'fetchStall') return fetch;
  if (!prep || !fetch) return null;
  const syn = profile.modes.synthetic!.summary!.iterMs;
  const cold = profile.modes.cold!.summary!.iterMs;
  return {
    mean: prep.mean + fetch.mean,
    halfWidth: combinedHalfWidth(syn.halfWidth, cold.halfWidth),
    proven: prep.proven && fetch.proven,
  };
}

/** What the regression rule compares: two profiles' pace, the budget, and the noise between runs when known. */
interface RegressionInput {
  profile: Profile;
  baseline: Profile;
  limit: number;
  /** The pace compared: the cold iteration time, or the later epochs'. */
  pace: (p: Profile) => Estimate;
  /** Where the later epochs' pace comes from, ending each note; null for the cold pace. */
  basis: string | null;
  /** The stored history's spread between runs (--noise-history), or null: the two profiles' noise only. */
  betweenRuns: BetweenRuns | null;
}

/**
 * Regression of the training pace (per sample when the batch sizes differ). It fails only when the growth exceeds the
 * budget by more than the noise: the lower end of the 95% interval of the relative change must lie above the limit. The
 * noise is that of both profiles, or the noise between runs learned from the stored history where that is wider
 * (between-runs.ts).
 */
function regression(input: RegressionInput, judge: Judge): RuleOutcome {
  const { profile, baseline, limit, pace, basis } = input;
  const now = profile.modes.cold!.summary!;
  const before = baseline.modes.cold!.summary!;
  const perSample = Math.abs(now.samplesPerIter - before.samplesPerIter) > 1e-9;
  const scale = (e: Estimate, by: number): Estimate => (perSample && by > 0 ? dividedBy(e, by) : e);
  const a = scale(pace(baseline), before.samplesPerIter);
  const b = scale(pace(profile), now.samplesPerIter);
  const change = changeBetween(a, b);
  if (change.relative === null)
    return judge(false, '—', null, 'the baseline iteration time is 0: record a new baseline');
  const unit = perSample ? 'ms/sample' : 'ms/iter';
  const noise = noiseBetweenRuns(change.relativeHalfWidth, input.betweenRuns);
  const figures = `${formatNumber(a.mean, 2)} → ${formatNumber(b.mean, 2)} ${unit}${perSample ? ' (batch sizes differ: compared per sample)' : ''}${basis ? ` (${basis})` : ''}`;
  // The note ends with which noise was judged, when the history was asked for.
  const judgeWith: Judge = (held, actual, value, note) =>
    judge(held, actual, value, noise.note && note ? `${note}; ${noise.note}` : note);
  const halfWidth = noise.halfWidth;
  const actual = `${signedPct(change.relative)}${halfWidth === null ? '' : ` ± ${pct(halfWidth)}`}`;
  if (halfWidth === null) {
    const held = change.relative <= limit;
    return judgeWith(
      held,
      actual,
      change.relative,
      `${figures}; no confidence interval in one of the profiles: judged on the means`,
    );
  }
  const of = noise.used === 'between' ? 'the noise between runs' : 'the noise of both profiles';
  if (change.relative - halfWidth > limit) {
    return judgeWith(false, actual, change.relative, `${figures}: beyond the ${pct(limit)} budget even after ${of}`);
  }
  if (change.relative > limit) {
    return judgeWith(
      true,
      actual,
      change.relative,
      `${figures}: above the ${pct(limit)} budget but within ${of} (± ${pct(halfWidth)}), not a proven regression`,
    );
  }
  return judgeWith(true, actual, change.relative, figures);
}

/** The relative half-width judged and the note saying which noise set it (none without --noise-history). */
function noiseBetweenRuns(
  within: number | null,
  between: BetweenRuns | null,
): { halfWidth: number | null; used: 'within' | 'between'; note: string | null } {
  if (between === null) return { halfWidth: within, used: 'within', note: null };
  const widened = widenedInterval(within ?? 0, between);
  const withinText = within === null ? 'none' : pct(within);
  const note =
    widened.used === 'between'
      ? BETWEEN_RUNS_TEXT.used(
          withinText,
          pct(between.halfWidth),
          widened.factor === Number.POSITIVE_INFINITY ? '∞' : widened.factor.toFixed(1),
          between.profiles,
          between.source,
        )
      : BETWEEN_RUNS_TEXT.notUsed(withinText, pct(between.halfWidth), between.profiles, between.source);
  return { halfWidth: widened.halfWidth, used: widened.used, note };
}

/**
 * Why a rule's modes cannot support it: missing, failed, without enough iterations, or unproven (with the mode's own
 * reason). Null when usable.
 */
export function unusableModes(profile: Profile, modes: Mode[]): string | null {
  const problems: string[] = [];
  for (const mode of modes) {
    const result = profile.modes[mode];
    if (!result) problems.push(`the ${mode} mode was not run (run ds-analyzer profile with it in --modes)`);
    else if (!result.summary)
      problems.push(`the ${mode} mode has too few measured iterations (${result.status}, ${result.stopReason})`);
    else if (!result.state.proven) problems.push(`the ${mode} mode is unproven: ${result.state.reason}`);
  }
  if (problems.length === 0 && !profile.analysis?.iterMs)
    problems.push('the profile has no analysis: re-run ds-analyzer profile');
  return problems.length ? problems.join('; ') : null;
}

function marginNote(estimate: Estimate, limit: number): string | null {
  if (estimate.halfWidth === null) return 'no confidence interval: judged on the mean';
  if (Math.abs(estimate.mean - limit) <= estimate.halfWidth) {
    return 'the limit lies inside the 95% interval: a re-run may flip this; tighten --precision for a firm verdict';
  }
  return null;
}

function expectedText(id: RuleId, limit: number): string {
  if (id === 'throughput') return `≥ ${formatNumber(limit, 1)} samples/s`;
  if (id === 'regression') return `≤ +${pct(limit)} iteration time`;
  if (id === 'timeToFirstBatch') return `≤ ${formatNumber(limit, 2)} s`;
  return `≤ ${pct(limit)} of iteration`;
}

/** An estimate and its half-width, each written by `fmt`: '61% ± 3%'. */
function plusMinus(e: Estimate, fmt: (value: number) => string): string {
  return `${fmt(e.mean)}${e.halfWidth === null ? '' : ` ± ${fmt(e.halfWidth)}`}`;
}

/** A fraction as a percentage for the verdicts: 2.5%, 61%, never a trailing '.0'. */
export function pct(fraction: number): string {
  const value = fraction * 100;
  if (Math.abs(value) >= 1e6) return `${value.toExponential(1)}%`;
  // One decimal below 10% (2.5%), none above (61%); never a trailing '.0'.
  return `${value < 10 ? String(Number(value.toFixed(1))) : value.toFixed(0)}%`;
}

/** A change as a signed percentage: +4.2%, −12%. */
export function signedPct(fraction: number): string {
  return `${fraction >= 0 ? '+' : '−'}${pct(Math.abs(fraction))}`;
}
