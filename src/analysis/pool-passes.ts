/**
 * Pools the runs of a drift-cancelling schedule into one result per mode: plain means of its runs, intervals holding
 * the run-to-run scatter too (docs/method.md, "Drift"). Everything else a result carries is combined so that the layers
 * reading it (split, what-if, report, gate) need not know there were two runs: iterations and samples concatenated, the
 * state proven only when every run proved it.
 */
import { stageTotalsOf } from './prep-stages.js';
import type { Mode } from '../schema/events.js';
import type {
  Estimate,
  FirstBatch,
  IterationSummary,
  ModeResult,
  Pass,
  RankResult,
  StateProof,
} from '../schema/profile.js';
import { fitDrift, poolRuns, type DriftFit, type RunMean, type RunPoint } from './drift.js';
import { median, sum, tQuantile975 } from './stats.js';
import { pickPaceRank } from './pace.js';

/** One run of the schedule: its folder label and what it measured. */
export interface ScheduledRun {
  label: string;
  result: ModeResult;
  /**
   * Runs of the same mode under another setting (a workers-sweep point, 'workers-4') pool by this name instead of their
   * mode.
   */
  group?: string;
}

/** The pooled result of each mode that ran, and of each named group. */
export interface PooledModes {
  modes: Partial<Record<Mode, ModeResult>>;
  /** The pooled result of each named group, in the order the groups first ran. */
  groups: Map<string, ModeResult>;
}

/**
 * The run-to-run fits behind each figure's interval, each on a relative scale (a machine 10% slower is 10% slower in
 * each figure). The wait's is fitted on the modes that wait (a run with at least SUBSTANTIAL_WAIT of its iteration) and
 * applied to them only: a wait near 0, in a mode whose loader keeps up, moves by a fraction of a millisecond between
 * runs (nothing next to its iteration, a factor of four next to itself) and must not lend that to a mode that waits 57
 * ms; its own interval is its in-run noise.
 */
export interface RunToRunFits {
  iter: DriftFit | null;
  wait: DriftFit | null;
  step: DriftFit | null;
}

/** Pools every mode's runs; a mode run once is returned as it is. */
export function poolPasses(runs: readonly ScheduledRun[]): PooledModes {
  const fits = runToRunFits(runs);
  const byGroup = new Map<string, ScheduledRun[]>();
  for (const run of runs) byGroup.set(groupOf(run), [...(byGroup.get(groupOf(run)) ?? []), run]);
  const modes: Partial<Record<Mode, ModeResult>> = {};
  const groups = new Map<string, ModeResult>();
  for (const [name, list] of byGroup) {
    const pooled = list.length === 1 ? list[0].result : poolMode(list, fits);
    if (list[0].group === undefined) modes[list[0].result.mode] = pooled;
    else groups.set(name, pooled);
  }
  return { modes, groups };
}

/** A run's pooling group: its mode, or the group it names. */
function groupOf(run: ScheduledRun): string {
  return run.group ?? run.result.mode;
}

function runToRunFits(runs: readonly ScheduledRun[]): RunToRunFits {
  // A group waits when any of its runs does: a run that hardly waited is part of its scatter.
  const waiting = new Set(runs.filter((r) => r.result.summary && waits(r.result.summary)).map(groupOf));
  const points = (
    pick: (s: IterationSummary) => Estimate,
    keep: (run: ScheduledRun) => boolean = () => true,
  ): RunPoint[] =>
    runs.flatMap((run) => {
      const r = run.result;
      return r.summary && keep(run)
        ? [
            {
              group: groupOf(run),
              midSec: windowMidAt(r) / 1000,
              meanMs: pick(r.summary).mean,
              seMs: standardError(pick(r.summary), r.summary.blocks),
            },
          ]
        : [];
    });
  return {
    iter: fitDrift(points((s) => s.iterMs)),
    wait: fitDrift(
      points(
        (s) => s.waitMs,
        (run) => waiting.has(groupOf(run)),
      ),
    ),
    step: fitDrift(points((s) => s.computeMs)),
  };
}

/** From this share of the iteration on, a wait scales with the machine's pace (the loader or storage sets it). */
const SUBSTANTIAL_WAIT = 0.05;

/** Whether a run waited for data a substantial share of its iteration. */
function waits(s: IterationSummary): boolean {
  return s.waitMs.mean >= SUBSTANTIAL_WAIT * s.iterMs.mean;
}

/** Midpoint of the measured window (the pace rank's iterations after warm-up), or of the whole run, ms since epoch. */
function windowMidAt(result: ModeResult): number {
  const rank = result.ranks.find((r) => r.rank === result.paceRank);
  const measured = rank?.summary ? rank.iterations.slice(rank.summary.warmupIterations) : [];
  if (measured.length > 0) return (measured[0].t + measured[measured.length - 1].t) / 2;
  return result.startedAt + (result.wallSec * 1000) / 2;
}

/**
 * The drift fit over the passes recorded in the three modes' pooled results, as the analysis reports it. The pooling's
 * own fit also takes in the runs of a workers sweep, so with one its scatter can differ a little from this.
 */
export function driftOfPasses(modes: readonly ModeResult[]): DriftFit | null {
  return fitDrift(
    modes.flatMap((m) =>
      (m.passes ?? []).flatMap((p) =>
        p.iterMs
          ? [{ group: m.mode, midSec: p.midAt / 1000, meanMs: p.iterMs.mean, seMs: standardError(p.iterMs, p.blocks) }]
          : [],
      ),
    ),
  );
}

function standardError(e: Estimate, blocks: number): number | null {
  return e.halfWidth === null || blocks < 2 ? null : e.halfWidth / tQuantile975(blocks - 1);
}

function poolMode(runs: readonly ScheduledRun[], fits: RunToRunFits): ModeResult {
  const results = runs.map((r) => r.result);
  const last = results[results.length - 1];
  const notOk = results.find((r) => r.status !== 'ok');
  const ranks = poolRanks(results, fits);
  // The pace rank of the pooled ranks: each run's own may differ (two ranks within noise of each other), and pooling
  // one run's pace rank with another's mixes two ranks' waits (a wait of 79 +- 1,983 ms was seen).
  const pace = pickPaceRank(ranks);
  // One stalled run leaves the pooled mode stalled: its figures are part of the pool.
  const stalled = results.find((r) => r.stalled)?.stalled;
  const { stalled: _lastStalled, ...lastResult } = last;
  return {
    ...lastResult,
    ...(stalled ? { stalled } : {}),
    status: notOk?.status ?? 'ok',
    stopReason: notOk?.stopReason ?? last.stopReason,
    jobExitCode: notOk?.jobExitCode ?? last.jobExitCode,
    jobSignal: notOk?.jobSignal ?? last.jobSignal,
    logs: notOk?.logs ?? last.logs,
    startedAt: results[0].startedAt,
    wallSec: sum(results.map((r) => r.wallSec)),
    state: poolState(results),
    ranks,
    paceRank: pace?.rank ?? last.paceRank,
    // The mode's summary is its pace rank's, pooled over the runs; none when no rank has one.
    summary: pace?.summary ?? null,
    resources: results.flatMap((r) => r.resources),
    jobCpuSecPerSample: meanOfKnown(results.map((r) => r.jobCpuSecPerSample)),
    storageReadBytesPerSec: meanOfKnown(results.map((r) => r.storageReadBytesPerSec)),
    badEventLines: sum(results.map((r) => r.badEventLines)),
    profilerCpuSec: results.every((r) => r.profilerCpuSec !== undefined)
      ? sum(results.map((r) => r.profilerCpuSec!))
      : undefined,
    profilerCpu: results.every((r) => r.profilerCpu !== undefined)
      ? sumByKey(results.map((r) => r.profilerCpu!))
      : undefined,
    passes: runs.map(toPass),
    firstBatch: meanFirstBatch(results),
    ...stageTotalsOf(results),
  };
}

function toPass(run: ScheduledRun): Pass {
  const r = run.result;
  return {
    label: run.label,
    startedAt: r.startedAt,
    wallSec: r.wallSec,
    midAt: windowMidAt(r),
    status: r.status,
    stopReason: r.stopReason,
    proven: r.state.proven,
    measuredIterations: r.summary?.measuredIterations ?? 0,
    iterMs: r.summary?.iterMs ?? null,
    waitMs: r.summary?.waitMs ?? null,
    computeMs: r.summary?.computeMs ?? null,
    blocks: r.summary?.blocks ?? 0,
    ...(r.firstBatch !== undefined ? { firstBatch: r.firstBatch } : {}),
  };
}

/** The runs' first batches, averaged part by part; null when none has one. */
function meanFirstBatch(results: readonly ModeResult[]): FirstBatch | null {
  const known = results.map((r) => r.firstBatch).filter((f): f is FirstBatch => f !== undefined && f !== null);
  if (known.length === 0) return null;
  const avg = (pick: (f: FirstBatch) => number) => known.reduce((sum, f) => sum + pick(f), 0) / known.length;
  return { sec: avg((f) => f.sec), startupSec: avg((f) => f.startupSec), firstWaitSec: avg((f) => f.firstWaitSec) };
}

/**
 * The runs' summaries as one: equal-weight means (see the file comment), counts summed. Runs without a summary are left
 * out; none gives null.
 */
export function poolSummaries(
  summaries: readonly (IterationSummary | null)[],
  fits: RunToRunFits,
): IterationSummary | null {
  const known = summaries.filter((s): s is IterationSummary => s !== null);
  if (known.length === 0) return null;
  if (known.length === 1) return known[0];
  const pool = (pick: (s: IterationSummary) => Estimate, fit: DriftFit | null): Estimate => {
    const runs: RunMean[] = known.map((s) => ({
      meanMs: pick(s).mean,
      seMs: standardError(pick(s), s.blocks),
      df: Math.max(1, s.blocks - 1),
    }));
    const mean = sum(runs.map((r) => r.meanMs)) / runs.length;
    const runToRun = fit ? { varianceMs2: fit.runToRunRelVariance * mean ** 2, df: fit.df } : null;
    const pooled = poolRuns(runs, runToRun, tQuantile975);
    return { mean: pooled.meanMs, halfWidth: pooled.halfWidthMs, proven: known.every((s) => pick(s).proven) };
  };
  const iterMs = pool((s) => s.iterMs, fits.iter);
  const measured = sum(known.map((s) => s.measuredIterations));
  const samplesPerIter = sum(known.map((s) => s.samplesPerIter * s.measuredIterations)) / Math.max(1, measured);
  return {
    warmupIterations: sum(known.map((s) => s.warmupIterations)),
    measuredIterations: measured,
    blockSize: known[0].blockSize,
    blocks: sum(known.map((s) => s.blocks)),
    iterMs,
    waitMs: pool((s) => s.waitMs, known.some(waits) ? fits.wait : null),
    computeMs: pool((s) => s.computeMs, fits.step),
    samplesPerIter,
    samplesPerSec: iterMs.mean > 0 ? samplesPerIter / (iterMs.mean / 1000) : 0,
    // The mean of the runs' medians; poolRanks replaces it with the median of the runs' measured iterations together.
    medianIterMs: sum(known.map((s) => s.medianIterMs)) / known.length,
    relativePrecision: iterMs.halfWidth !== null && iterMs.mean > 0 ? iterMs.halfWidth / iterMs.mean : null,
  };
}

/**
 * The median time per iteration over the runs' measured windows together: each run's iterations after its warm-up, as
 * many as its summary measured (a run without a summary measured none); null when there are none.
 */
function measuredMedian(runs: readonly RankResult[]): number | null {
  const times = runs.flatMap((run) => {
    if (!run.summary) return [];
    const start = run.summary.warmupIterations;
    const ordered = [...run.iterations].sort((a, b) => a.i - b.i);
    return ordered.slice(start, start + run.summary.measuredIterations).map((it) => it.waitMs + it.computeMs);
  });
  return times.length > 0 ? median(times) : null;
}

/** Each rank's iterations, run after run (indices continued), and its summaries pooled. */
function poolRanks(results: readonly ModeResult[], fits: RunToRunFits): RankResult[] {
  const byRank = new Map<number, RankResult[]>();
  for (const r of results) for (const rank of r.ranks) byRank.set(rank.rank, [...(byRank.get(rank.rank) ?? []), rank]);
  return [...byRank.entries()]
    .sort(([a], [b]) => a - b)
    .map(([rank, list]) => {
      // Iteration indices continue run after run; saves and epoch starts keep pointing at their own iterations.
      const offsets: number[] = [];
      let offset = 0;
      const iterations = list.flatMap((r) => {
        offsets.push(offset);
        const shifted = r.iterations.map((it) => ({ ...it, i: it.i + offset }));
        offset += r.iterations.reduce((max, it) => Math.max(max, it.i + 1), 0);
        return shifted;
      });
      const checkpoints = list.flatMap((r, k) => (r.checkpoints ?? []).map((c) => ({ ...c, i: c.i + offsets[k] })));
      const epochs = list.flatMap((r, k) => (r.epochs ?? []).map((e) => ({ ...e, i: e.i + offsets[k] })));
      const mainCpu = meanOfKnown(list.map((r) => r.mainCpuMsPerSample ?? null));
      const summary = poolSummaries(
        list.map((r) => r.summary),
        fits,
      );
      return {
        rank,
        ...(list[0].node !== undefined ? { node: list[0].node } : {}),
        pid: list[list.length - 1].pid,
        workers: list[0].workers,
        ...(list[0].loader !== undefined ? { loader: list[0].loader } : {}),
        ...(mainCpu !== null ? { mainCpuMsPerSample: mainCpu } : {}),
        iterations,
        ...(checkpoints.length > 0 ? { checkpoints } : {}),
        ...(epochs.length > 0 ? { epochs } : {}),
        summary:
          summary && list.length > 1
            ? { ...summary, medianIterMs: measuredMedian(list) ?? summary.medianIterMs }
            : summary,
      };
    });
}

/** What the pooled results are, as a reason names them: runs of a schedule, or nodes of one run (merge-nodes.ts). */
export interface PooledParts {
  /** The parts together: 'runs'. */
  plural: string;
  /** The part at `index`: 'run 2'. */
  name: (index: number) => string;
}

const RUNS: PooledParts = { plural: 'runs', name: (index) => `run ${index + 1}` };

/**
 * Proven only when every part (a run, or a node) proved its state. Bytes add up; the residency before the job is the
 * least favourable part's: the least resident for the cached mode, the most for the cold one.
 */
export function poolState(results: readonly ModeResult[], parts: PooledParts = RUNS): StateProof {
  const states = results.map((r) => r.state);
  const unproven = results.findIndex((r) => !r.state.proven);
  const readBytes = states.every((s) => s.readBytes !== null) ? sum(states.map((s) => s.readBytes!)) : null;
  const consumedBytes = sum(states.map((s) => s.consumedBytes));
  const consumedSamples = states.every((s) => s.consumedSamples !== undefined)
    ? sum(states.map((s) => s.consumedSamples!))
    : undefined;
  const resident = states.map((s) => s.residentBytesBefore);
  const keepers = states.map((s) => s.keeper).filter((k) => k !== undefined);
  const wallSec = sum(results.map((r) => r.wallSec));
  const reEvictions = states.some((s) => s.reEvictions !== undefined)
    ? sum(states.map((s) => s.reEvictions ?? 0))
    : undefined;
  const keeperCpuSec = sum(keepers.map((k) => k.cpuSec));
  return {
    ...states[0],
    proven: unproven < 0,
    // Each run's own figures: the first run's are not the second's.
    reason:
      unproven < 0
        ? provenInEach(states, parts)
        : `${parts.name(unproven)} of ${states.length}: ${states[unproven].reason}`,
    residentBytesBefore: results[0].mode === 'cached' ? Math.min(...resident) : Math.max(...resident),
    readBytes,
    consumedBytes,
    consumedSamples,
    readFraction: readBytes !== null && consumedBytes > 0 ? readBytes / consumedBytes : null,
    ...(reEvictions !== undefined ? { reEvictions } : {}),
    ...(keepers.length > 0
      ? {
          keeper: {
            mechanism: keepers.some((k) => k.mechanism === 'scan') ? ('scan' as const) : keepers[0].mechanism,
            cpuSec: keeperCpuSec,
            cpuShare: wallSec > 0 ? keeperCpuSec / wallSec : 0,
            ...(keepers.find((k) => k.fallbackReason)
              ? { fallbackReason: keepers.find((k) => k.fallbackReason)!.fallbackReason }
              : {}),
          },
        }
      : {}),
  };
}

/** 'run 1: <its reason>; run 2: <its reason>', or one reason when the parts' reasons read the same. */
function provenInEach(states: readonly StateProof[], parts: PooledParts): string {
  const reasons = states.map((s) => s.reason);
  if (reasons.every((r) => r === reasons[0])) return `${reasons[0]} (each of ${reasons.length} ${parts.plural})`;
  return reasons.map((r, k) => `${parts.name(k)}: ${r}`).join('; ');
}

function meanOfKnown(values: readonly (number | null)[]): number | null {
  const known = values.filter((v): v is number => v !== null);
  return known.length > 0 ? sum(known) / known.length : null;
}

/** Component-wise sums of records of seconds (the profiler's CPU by component over pooled runs). */
function sumByKey(records: readonly Record<string, number>[]): Record<string, number> {
  const total: Record<string, number> = {};
  for (const record of records)
    for (const [key, value] of Object.entries(record)) total[key] = (total[key] ?? 0) + value;
  return total;
}
