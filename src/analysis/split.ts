/**
 * The differential split (DESIGN.md, "The differential method"): compute from the synthetic mode, prep stall =
 * T_cached - T_synthetic, fetch stall = T_cold - T_cached, with confidence intervals, rates and a verdict.
 */
import { findStraggler, judgedRankWaits } from './straggler.js';
import type { Mode } from '../schema/events.js';
import type { Analysis, Estimate, IterationSummary, ModeResult, StallCall } from '../schema/profile.js';
import { ADVICE_TEXT, VERDICT_TEXT, type Bound, type Severity, type TextContext } from './advice-text.js';
import { combinedHalfWidth, difference, excludesZero, liesAbove, NAMING_MARGIN } from './estimate.js';
import { boundaryStall } from './boundary-stall.js';
import { checkFreqInterval, checkpointStall, unseenWriteBytesPerIteration } from './checkpoint-stall.js';
import { BOUNDARY_TEXT, CHECKPOINT_TEXT } from './pipeline-stall-text.js';
import { steadyMode } from './step-events.js';
import { allRanksSamplesPerSec, bytesPerSample, prepCpuSecPerSample, reportsBytes } from './mode-rates.js';
import { driftOfPasses } from './pool-passes.js';
import { CAVEAT_TEXT } from './caveat-text.js';
import { subsetCaveat } from './subset-text.js';
import { prepStages } from './prep-stages.js';
import { callStall, contentionOf, inconclusiveOf, isNamed, STALL_THRESHOLD, type StallParts } from './stall-calls.js';

/** The modes of one profile; a partial profile lacks some. */
export interface ModeResults {
  synthetic?: ModeResult;
  cached?: ModeResult;
  cold?: ModeResult;
}

/** From this share of the iteration time on, a stall is 'highly' limiting. */
export const HIGH_STALL_THRESHOLD = 0.5;

type Usable = ModeResult & { summary: IterationSummary };

/**
 * The differential split of a profile's modes into compute, prep stall and fetch stall per iteration, with rates, a
 * verdict and advice. A missing mode gives null figures and a caveat; a mode that ended early but has a summary is used
 * with a caveat; figures resting on a mode whose cache state was not proven are marked `proven: false` and the caveat
 * gives the mode's reason.
 */
export function analyze(given: ModeResults, host: { cpus?: number; remote?: boolean; gpus?: number } = {}): Analysis {
  const caveats: string[] = [];
  const measured: Measured = {
    syn: usable('synthetic', given.synthetic, caveats),
    cached: usable('cached', given.cached, caveats),
    cold: usable('cold', given.cold, caveats),
  };
  // A stalled mode's figures stay out of everything below: the stalls apart (saves, epoch starts) and the drift too.
  const modes = withoutStalled(given);
  if (modes.cached?.subset) caveats.push(subsetCaveat(modes.cached.subset));
  const terms = stallTerms(measured, modes, caveats);
  const { stalls, stallCalls, checkpoint, boundary } = terms;
  const rates = rateFigures(measured, caveats);
  const drift = driftReport(modes);
  const driftCaveat = drift
    ? driftVersusStalls(
        drift,
        stallCalls.prep === 'stall' ? stalls.prepStallMs : null,
        stallCalls.fetch === 'stall' ? stalls.fetchStallMs : null,
      )
    : null;
  if (driftCaveat) caveats.push(driftCaveat);
  const verdict = boundOf(measured, stalls, stallCalls, drift, {
    checkpoint: checkpoint && checkpoint.call === 'stall' ? checkpoint.fraction : 0,
    boundary: boundary && boundary.call === 'stall' ? boundary.fraction : 0,
  });
  const context = verdictContext(given, measured, terms, rates, verdict, host);
  const { bound, severity } = verdict;
  const text = bound === 'compute' || bound === 'unknown' ? VERDICT_TEXT[bound] : VERDICT_TEXT[bound][severity!];
  const advice = bound === 'compute' || bound === 'unknown' ? ADVICE_TEXT[bound] : ADVICE_TEXT[bound][severity!];
  return {
    ...stalls,
    ...rates,
    checkpointStall: checkpoint && { ...checkpoint, text: CHECKPOINT_TEXT.measured(checkpoint) },
    boundaryStall: boundary && { ...boundary, text: BOUNDARY_TEXT.measured(boundary) },
    stallCalls,
    drift,
    verdict: { bound, severity, text: text(context) },
    advice: advice(context),
    caveats,
    // Multi-rank jobs only: one rank has no straggler to name.
    ...(judgedRankWaits(modes) ? { straggler: findStraggler(modes) } : {}),
    prepStages: prepStages({
      cached: modes.cached,
      prepCpuSecPerSample: rates.prepCpuSecPerSample,
      gpus: host.gpus ?? null,
    }),
  };
}

/** The stall terms of the split: the stalls between the modes, called, and the stalls measured apart from them. */
type StallTerms = ReturnType<typeof stallTerms>;

/**
 * The stalls between the modes from their steady paces, and the stalls apart from them (saves inside steps, epoch
 * starts), each a share of the real iteration, which takes them all.
 */
function stallTerms(measured: Measured, modes: ModeResults, caveats: string[]) {
  const checkpoint = checkpointStall(modes);
  const boundary = boundaryStall(modes);
  const steady = { syn: steadyOf(measured.syn), cached: steadyOf(measured.cached), cold: steadyOf(measured.cold) };
  const stalls = stallFigures(steady, caveats, [checkpoint?.ms ?? null, boundary?.ms ?? null]);
  const unseen = unseenWritesCaveat(modes, checkpoint);
  if (unseen) caveats.push(unseen);
  const apart = <T extends { ms: Estimate }>(term: T | null) =>
    term && {
      ...term,
      fraction: fraction(term.ms, stalls.iterMs),
      call: callStall(term.ms, null, stalls.iterMs, NAMING_MARGIN),
    };
  return {
    stalls,
    // Whether a stall is real: its 95% CI must clear 0 by the margin, otherwise it is noise.
    stallCalls: {
      prep: callStall(stalls.prepStallMs, stalls.prepStallParts, stalls.iterMs, namingMargin(measured.cached)),
      fetch: callStall(stalls.fetchStallMs, stalls.fetchStallParts, stalls.iterMs, namingMargin(measured.cold)),
    },
    checkpoint: apart(checkpoint),
    boundary: apart(boundary),
  };
}

/** What the verdict's and the advice's words read: the shares, rates and calls as the whole job sees them. */
function verdictContext(
  given: ModeResults,
  { syn, cached, cold }: Measured,
  { stalls, stallCalls, checkpoint, boundary }: StallTerms,
  rates: RateFigures,
  verdict: Verdict,
  host: { cpus?: number; remote?: boolean },
): TextContext {
  const terms: Partial<Record<Bound, Estimate | null>> = {
    prep: stalls.prepStallMs,
    fetch: stalls.fetchStallMs,
    checkpoint: checkpoint?.ms,
    boundary: boundary?.ms,
  };
  const dominant = terms[verdict.bound] ?? null;
  const bytesPerSampleValue = (cold && bytesPerSample(cold)) ?? (cached && bytesPerSample(cached));
  // The rates are the pace-setting rank's; the advice speaks of the whole job, whose ranks share the storage and the
  // CPUs.
  const jobGpuSamplesPerSec = syn && allRanksSamplesPerSec(syn);
  return {
    fetchFraction: verdict.sigFetch,
    prepFraction: verdict.sigPrep,
    totalStallFraction:
      stalls.prepStallFraction !== null && stalls.fetchStallFraction !== null
        ? stalls.prepStallFraction + stalls.fetchStallFraction
        : null,
    storageReadBytesPerSec: rates.storageReadBytesPerSec,
    neededStorageBytesPerSec:
      jobGpuSamplesPerSec !== null && bytesPerSampleValue !== null ? jobGpuSamplesPerSec * bytesPerSampleValue : null,
    prepCpuSecPerSample: rates.prepCpuSecPerSample,
    gpuSamplesPerSec: jobGpuSamplesPerSec,
    prepSamplesPerSec: cached && allRanksSamplesPerSec(cached),
    missingModes: verdict.missingModes,
    stalled: stalledModes(given),
    unproven: dominant !== null && !dominant.proven,
    stallsWithinNoise: stallCalls.prep === 'within-noise' && stallCalls.fetch === 'within-noise',
    contention: contentionOf(stallCalls, stalls.prepStallParts, stalls.fetchStallParts, stalls.iterMs, verdict.bound),
    boundIsContention:
      (verdict.bound === 'prep' || verdict.bound === 'fetch') && stallCalls[verdict.bound] === 'contention',
    inconclusive: verdict.inconclusive,
    noiseRoom: verdict.bound === 'compute' ? verdict.noiseRoom : null,
    workersLimit: workersLimit(cached, host.cpus ?? null),
    ...(host.remote ? { remote: true } : {}),
    checkpoint: checkpoint && {
      ...checkpoint,
      everyForBudget: checkFreqInterval(checkpoint.perSaveMs.mean, steadyIterMs(stalls.iterMs, checkpoint.ms)),
    },
    boundary,
    loaderFramework: (cold ?? cached ?? syn)?.ranks.find((r) => r.loader?.framework)?.loader?.framework ?? null,
  };
}

/** The three modes, each null where it cannot be used. */
interface Measured {
  syn: Usable | null;
  cached: Usable | null;
  cold: Usable | null;
}

/** The split's time figures: compute, the two stalls with their parts, the iteration they are shares of. */
type StallFigures = Pick<
  Analysis,
  'computeMs' | 'prepStallMs' | 'fetchStallMs' | 'iterMs' | 'prepStallFraction' | 'fetchStallFraction'
> & {
  prepStallParts: StallParts | null;
  fetchStallParts: StallParts | null;
};

/**
 * The stalls between the modes, per iteration, and the caveats their measurements call for. Each mode's time is its
 * steady pace (step-events.ts: saves inside steps and epoch starts taken out); `extras` (the checkpoint and boundary
 * stalls, measured apart) are added back to the real pace the stalls are shares of.
 */
function stallFigures(
  { syn, cached, cold }: Measured,
  caveats: string[],
  extras: (Estimate | null)[] = [],
): StallFigures {
  const tSyn = syn && iterEstimate(syn);
  const tCached = cached && iterEstimate(cached);
  const tCold = cold && iterEstimate(cold);
  const prepShift = syn && cached ? stepShiftCaveat(syn.summary, cached.summary, 'prep') : null;
  if (prepShift) caveats.push(prepShift);
  const fetchShift = cached && cold ? stepShiftCaveat(cached.summary, cold.summary, 'fetch') : null;
  if (fetchShift) caveats.push(fetchShift);
  const overhead = profilerOverheadCaveat([syn, cached, cold]);
  if (overhead) caveats.push(overhead);
  const prepStallMs = tCached && tSyn ? clampedDifference(tCached, tSyn) : null;
  const fetchStallMs = tCold && tCached ? clampedDifference(tCold, tCached) : null;
  // A negative difference inside the noise is the zero it is clamped to; beyond the noise it needs saying, since the
  // shares then do not add up.
  if (tCached && tSyn && liesAbove(clampedDifference(tSyn, tCached)))
    caveats.push(CAVEAT_TEXT.clampedStall('prep', 'cached', tCached.mean, 'synthetic', tSyn.mean, tCold !== null));
  if (tCold && tCached && liesAbove(clampedDifference(tCached, tCold)))
    caveats.push(CAVEAT_TEXT.clampedStall('fetch', 'cold', tCold.mean, 'cached', tCached.mean, true));
  // Fractions are of the real training pace (cold); without it, of the slowest mode measured, which is the closest
  // available stand-in.
  const iterMs = withExtras(tCold ?? slowest([tCached, tSyn]), extras);
  return {
    computeMs: tSyn,
    prepStallMs,
    fetchStallMs,
    iterMs,
    prepStallFraction: fraction(prepStallMs, iterMs),
    fetchStallFraction: fraction(fetchStallMs, iterMs),
    prepStallParts: syn && cached ? stallParts(syn.summary, cached.summary) : null,
    fetchStallParts: cached && cold ? stallParts(cached.summary, cold.summary) : null,
  };
}

/** The split's rates. */
type RateFigures = Pick<
  Analysis,
  | 'gpuSamplesPerSec'
  | 'prepSamplesPerSec'
  | 'coldSamplesPerSec'
  | 'storageReadBytesPerSec'
  | 'memoryReadBytesPerSec'
  | 'prepCpuSecPerSample'
>;

/** Samples per second of each mode, the storage and memory rates, and the prep CPU per sample. */
function rateFigures({ syn, cached, cold }: Measured, caveats: string[]): RateFigures {
  return {
    gpuSamplesPerSec: syn && rateOf(syn.summary),
    prepSamplesPerSec: cached && rateOf(cached.summary),
    coldSamplesPerSec: cold && rateOf(cold.summary),
    storageReadBytesPerSec: cold ? cold.storageReadBytesPerSec : null,
    memoryReadBytesPerSec: cached && byteEstimateHolds(cached, cold, caveats) ? memoryRate(cached) : null,
    prepCpuSecPerSample: syn && cached ? prepCpu(syn, cached, caveats) : null,
  };
}

/** What bounds the job, how much, and what the verdict's words need to know of it. */
interface Verdict {
  bound: Bound;
  severity: Severity | null;
  sigPrep: number | null;
  sigFetch: number | null;
  missingModes: Mode[];
  inconclusive: TextContext['inconclusive'];
  noiseRoom: TextContext['inconclusive'];
}

function boundOf(
  { syn, cached, cold }: Measured,
  stalls: StallFigures,
  stallCalls: { prep: StallCall; fetch: StallCall },
  drift: Analysis['drift'] | null,
  apart: { checkpoint: number | null; boundary: number | null },
): Verdict {
  // A stall the split table names (a wait, or the step slowed beside the loader) counts toward the verdict: the table
  // and the verdict read the same calls (issue 42).
  const sigPrep = isNamed(stallCalls.prep) ? stalls.prepStallFraction : 0;
  const sigFetch = isNamed(stallCalls.fetch) ? stalls.fetchStallFraction : 0;
  const missingModes = (['synthetic', 'cached', 'cold'] as const).filter(
    (m) => ({ synthetic: syn, cached, cold })[m] === null,
  );
  const apartShare = (apart.checkpoint ?? 0) + (apart.boundary ?? 0);
  // The room the noise leaves for a stall not named, beside those that are under STALL_THRESHOLD together.
  const noiseRoom =
    missingModes.length === 0 &&
    sigPrep !== null &&
    sigFetch !== null &&
    sigPrep + sigFetch + apartShare < STALL_THRESHOLD
      ? inconclusiveOf(stallCalls, stalls.prepStallParts, stalls.fetchStallParts, stalls.iterMs, drift)
      : null;
  // No stall named at all, but too noisy to rule one out: say so rather than call it compute-bound. A stall that is
  // named (even a small one, and a checkpoint or boundary stall) answers the question: never beside "inconclusive".
  const anyNamed = isNamed(stallCalls.prep) || isNamed(stallCalls.fetch) || apartShare > 0;
  const inconclusive = anyNamed ? null : noiseRoom;
  const facts = { sigPrep, sigFetch, missingModes, inconclusive, noiseRoom: inconclusive ? null : noiseRoom };
  if (missingModes.length > 0 || sigPrep === null || sigFetch === null || inconclusive)
    return { ...facts, bound: 'unknown', severity: null };
  const shares: { bound: Bound; share: number }[] = [
    { bound: 'prep', share: sigPrep },
    { bound: 'fetch', share: sigFetch },
    { bound: 'checkpoint', share: apart.checkpoint ?? 0 },
    { bound: 'boundary', share: apart.boundary ?? 0 },
  ];
  // Stalls under 10% of the iteration: the accelerator sets the pace.
  if (shares.reduce((sum, s) => sum + s.share, 0) < STALL_THRESHOLD)
    return { ...facts, bound: 'compute', severity: null };
  // Stall-bound even when compute is the largest single share: removing the stall would speed every iteration up by
  // that much. The largest stall names it (the first of equals: prep before fetch, as before checkpoints were
  // measured).
  const largest = shares.reduce((a, b) => (b.share > a.share ? b : a));
  return { ...facts, bound: largest.bound, severity: largest.share >= HIGH_STALL_THRESHOLD ? 'highly' : 'moderately' };
}

/**
 * Pre-processing CPU per sample: the job's CPU per sample in the cached mode less the synthetic mode's. When the cached
 * mode used no more (prep too cheap to see next to the step, or noise), it is not measurable: null and a caveat, never
 * a confident 0.
 */
function prepCpu(syn: Usable, cached: Usable, caveats: string[]): number | null {
  const u = prepCpuSecPerSample(syn, cached);
  if (u === null) return null;
  if (u > 0) return u;
  caveats.push(CAVEAT_TEXT.prepCpuNotMeasurable(cached.jobCpuSecPerSample!, syn.jobCpuSecPerSample!));
  return null;
}

/** The mode if it can be used, adding caveats for what is missing, partial or unproven. */
function usable(mode: Mode, result: ModeResult | undefined, caveats: string[]): Usable | null {
  if (result === undefined) {
    caveats.push(CAVEAT_TEXT.missingMode(mode));
    return null;
  }
  if (result.stalled) {
    caveats.push(CAVEAT_TEXT.stalled(mode, result.stalled.text));
    return null;
  }
  if (result.summary === null) {
    caveats.push(CAVEAT_TEXT.tooFewIterations(mode, result));
    return null;
  }
  if (result.status !== 'ok') caveats.push(CAVEAT_TEXT.endedEarly(mode, result));
  if (!result.state.proven) caveats.push(CAVEAT_TEXT.unprovenState(mode, result.state.reason));
  return result as Usable;
}

/** The modes that did not stall (analysis/stalls.ts): a stalled one is as good as missing. */
function withoutStalled(modes: ModeResults): ModeResults {
  return Object.fromEntries(Object.entries(modes).filter(([, result]) => result && !result.stalled));
}

/** The stalled modes and why, for the verdict's words. */
function stalledModes(modes: ModeResults): NonNullable<TextContext['stalled']> {
  return (['synthetic', 'cached', 'cold'] as const).flatMap((mode) => {
    const stalled = modes[mode]?.stalled;
    return stalled ? [{ mode, cause: stalled.cause, text: stalled.text }] : [];
  });
}

/** From this share of one CPU on, the profiler's own work is worth naming. */
export const PROFILER_CPU_SHARE = 0.1;

/**
 * The profiler's own CPU (sampling /proc, and in the cold mode re-evicting the dataset so it stays cold) is not the
 * job's, but on a machine with few cores it competes with a CPU-bound job: a mode where it used a tenth of a CPU or
 * more is named, next to the least it used in another mode.
 */
function profilerOverheadCaveat(modes: (Usable | null)[]): string | null {
  const shares = modes
    .filter((m): m is Usable => m !== null && m.profilerCpuSec !== undefined && m.wallSec > 0)
    .map((m) => ({ mode: m.mode, share: m.profilerCpuSec! / m.wallSec, keeper: m.state.keeper }));
  const byShare = [...shares].sort((a, b) => b.share - a.share);
  const worst = byShare[0];
  if (worst === undefined || worst.share < PROFILER_CPU_SHARE) return null;
  const least = byShare.length > 1 ? byShare[byShare.length - 1] : null;
  return CAVEAT_TEXT.profilerOverhead(worst, least);
}

/** Below this relative change, the step time is taken as the same in both modes. */
export const STEP_SHIFT_THRESHOLD = 0.1;

/**
 * The differential method reads the prep stall as T_cached - T_synthetic (and the fetch stall as T_cold - T_cached),
 * which equals the extra wait for data only when the training step itself costs the same in both runs. When the step
 * (time between batches) is measurably longer or shorter in the later run, say by how much, and how much of the stall
 * the job really spent waiting: on a CPU-trained job the loader workers and the kernel's reads compete with the step
 * for the cores, which a GPU would not feel.
 */
function stepShiftCaveat(before: IterationSummary, after: IterationSummary, stall: 'prep' | 'fetch'): string | null {
  const a = before.computeMs;
  const b = after.computeMs;
  if (!(a.mean > 0)) return null;
  const shift = difference(b, a);
  const diff = shift.mean;
  if (!excludesZero(shift) || Math.abs(diff) / a.mean < STEP_SHIFT_THRESHOLD) return null;
  return CAVEAT_TEXT.stepShift(stall, a.mean, b.mean, diff, after.waitMs.mean - before.waitMs.mean);
}

function iterEstimate(m: Usable): Estimate {
  const e = m.summary.iterMs;
  return { mean: e.mean, halfWidth: e.halfWidth, proven: e.proven && m.state.proven };
}

/** A usable mode as if it trained steadily (step-events.ts): its summary less saves inside steps and epoch starts. */
function steadyOf(m: Usable | null): Usable | null {
  return m && (steadyMode(m) as Usable);
}

/** The steady pace plus the stalls measured apart from it: the real per-iteration time. */
function withExtras(steady: Estimate | null, extras: readonly (Estimate | null)[]): Estimate | null {
  const present = extras.filter((e): e is Estimate => e !== null);
  if (steady === null || present.length === 0) return steady;
  return {
    mean: steady.mean + present.reduce((sum, e) => sum + e.mean, 0),
    halfWidth: combinedHalfWidth(steady.halfWidth, ...present.map((e) => e.halfWidth)),
    proven: steady.proven && present.every((e) => e.proven),
  };
}

/** The real per-iteration time without the checkpoint stall: the iteration CheckFreq's rule budgets against. */
function steadyIterMs(iter: Estimate | null, checkpoint: Estimate): number {
  return iter === null ? 0 : Math.max(0, iter.mean - checkpoint.mean);
}

/** From this many bytes per iteration written beyond the saves the hook saw, the writes are named. */
export const UNSEEN_WRITE_BYTES_PER_ITER = 1 << 20;

/**
 * Writes the hook cannot see (a custom writer, logs): the job tree's write_bytes beyond its saves' own, named when they
 * reach a MiB an iteration, since their time is in the step, where no term shows it.
 */
function unseenWritesCaveat(modes: ModeResults, checkpoint: ReturnType<typeof checkpointStall>): string | null {
  const mode = modes.cold ?? modes.cached ?? modes.synthetic;
  if (!mode) return null;
  const perIter = checkpoint?.unseenWriteBytesPerIter ?? unseenWriteBytesPerIteration(mode, null);
  if (perIter === null || perIter < UNSEEN_WRITE_BYTES_PER_ITER) return null;
  return CHECKPOINT_TEXT.unseenWrites(
    perIter,
    checkpoint?.mode ?? mode.mode,
    checkpoint?.syncedBytesPerSec ?? null,
    checkpoint !== null,
  );
}

/** a - b of two independent runs (estimate.ts) clamped at 0: a negative stall is noise. */
function clampedDifference(a: Estimate, b: Estimate): Estimate {
  const raw = difference(a, b);
  return { ...raw, mean: Math.max(0, raw.mean) };
}

function slowest(estimates: (Estimate | null)[]): Estimate | null {
  return estimates.reduce((a, e) => (e !== null && (a === null || e.mean > a.mean) ? e : a), null);
}

/** Share of the iteration time, kept within [0, 1] (noise could push a stall past a faster cold run). */
function fraction(part: Estimate | null, whole: Estimate | null): number | null {
  if (part === null || whole === null || !(whole.mean > 0)) return null;
  return Math.min(1, Math.max(0, part.mean / whole.mean));
}

/**
 * The margin a stall measured against `later` must clear: NAMING_MARGIN, or the share of one CPU the profiler itself
 * used in that mode when it used more (a keeper that fell back to scanning a large dataset): its footprint on a
 * CPU-bound job is never taken for the job's stall.
 */
function namingMargin(later: Usable | null): number {
  const share =
    later && later.profilerCpuSec !== undefined && later.wallSec > 0 ? later.profilerCpuSec / later.wallSec : 0;
  return Math.max(NAMING_MARGIN, share);
}

/**
 * A stall taken apart: the growth of the wait for data and of the step itself from the earlier mode to the later one
 * (not clamped; they add up to the unclamped stall).
 */
function stallParts(before: IterationSummary, after: IterationSummary): NonNullable<Analysis['prepStallParts']> {
  return {
    waitGrowthMs: difference(after.waitMs, before.waitMs),
    stepGrowthMs: difference(after.computeMs, before.computeMs),
  };
}

/** Each mode's first and second run and the drift fitted over all runs; null for one run per mode. */
function driftReport(modes: ModeResults): NonNullable<Analysis['drift']> | null {
  const pooled = (['synthetic', 'cached', 'cold'] as const).flatMap((m) => (modes[m]?.passes ? [modes[m]!] : []));
  const perMode = pooled.flatMap((m) => {
    const runs = m.passes!.filter((p) => p.iterMs !== null);
    return runs.length >= 2
      ? [{ mode: m.mode, firstMs: runs[0].iterMs!.mean, secondMs: runs[runs.length - 1].iterMs!.mean }]
      : [];
  });
  if (perMode.length === 0) return null;
  const fit = driftOfPasses(pooled);
  return {
    modes: perMode,
    slopePctPerMin: fit?.slopePerSec != null ? fit.slopePerSec * 60 * 100 : null,
    runToRunPct: fit ? Math.sqrt(fit.runToRunRelVariance) * 100 : null,
    df: fit?.df ?? null,
  };
}

/**
 * The mirrored order cancels a steady drift; a drift as large as a named stall is still worth saying, since what is not
 * steady in it lands in the stall.
 */
function driftVersusStalls(
  drift: NonNullable<Analysis['drift']>,
  prep: Estimate | null,
  fetch: Estimate | null,
): string | null {
  const moves = drift.modes.map((m) => ({ ...m, moveMs: Math.abs(m.secondMs - m.firstMs) }));
  const largest = moves.reduce((a, b) => (b.moveMs > a.moveMs ? b : a));
  const stalls = [
    { name: 'prep', e: prep },
    { name: 'fetch', e: fetch },
  ].filter((x) => x.e !== null && x.e.mean > 0 && largest.moveMs >= x.e.mean);
  if (stalls.length === 0) return null;
  return CAVEAT_TEXT.driftVersusStalls(
    stalls.map((x) => ({ name: x.name, ms: x.e!.mean })),
    largest,
  );
}

/** samples / T, samples per second of the mode's pace-setting rank. */
function rateOf(s: IterationSummary): number | null {
  return s.iterMs.mean > 0 ? s.samplesPerIter / (s.iterMs.mean / 1000) : null;
}

/**
 * Whether the bytes the cached mode consumed can be trusted. A job that does not report bytes per batch (the PyTorch
 * hook cannot know them) gets samples x the mean file size, which assumes one file per sample; the cold mode's storage
 * reads are the only check of that. An in-memory dataset of a few large files (torchvision's MNIST: 4 files, 60,000
 * samples) would otherwise show a memory rate of tens of GB/s.
 */
function byteEstimateHolds(cached: Usable, cold: Usable | null, caveats: string[]): boolean {
  if (reportsBytes(cached.ranks) || bytesPerSample(cached) === null) return true;
  const readFraction = cold?.state.readFraction ?? null;
  if (readFraction !== null && readFraction >= 0.5 && readFraction <= 2) return true;
  caveats.push(CAVEAT_TEXT.byteEstimateUnconfirmed(readFraction));
  return false;
}

/**
 * Bytes per second the whole job (all ranks) consumed from memory in the cached mode: the measured-window sample rate
 * of each rank times the mean bytes per sample, so it compares with the cold mode's storage throughput, which is also
 * measured over the whole process tree.
 */
function memoryRate(m: Usable): number | null {
  const perSample = bytesPerSample(m);
  const samplesPerSec = allRanksSamplesPerSec(m);
  return perSample === null || samplesPerSec === null ? null : samplesPerSec * perSample;
}

/**
 * The cached mode's loader workers, all ranks together, when they are fewer than the CPUs the job could use: prep can
 * then use at most that many CPUs whatever the server has, and raising num_workers is the first lever.
 */
function workersLimit(cached: ModeResult | null, hostCpus: number | null): TextContext['workersLimit'] {
  if (!cached || cached.ranks.length === 0 || cached.ranks.some((r) => r.workers === null)) return null;
  const cpus = cached.cpus?.length ?? hostCpus;
  const perRank = cached.ranks[0].workers!;
  const workers = cached.ranks.reduce((sum, r) => sum + r.workers!, 0);
  // Each rank's training process keeps a CPU of its own busy: workers are short only below what is left.
  return cpus !== null && workers + cached.ranks.length < cpus ? { perRank, workers, cpus } : null;
}
